/*
Copyright 2026 The RunLore Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package eval

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/test/testenv"
)

// updateCassette re-records test/cassettes/oom-after-memory-limit-cut.json
// from the reasoning model below: go test ./pkg/eval -run Cassette -update-cassette
var updateCassette = flag.Bool("update-cassette", false, "re-record the eval cassette")

// servedFleet is the URL the harness serves the scenario's fleet at.
var servedFleet = regexp.MustCompile(`http://127\.0\.0\.1:\d+/oom-after-memory-limit-cut/fleet/\.git`)

var cassettePath = filepath.Join("..", "..", "test", "cassettes", "oom-after-memory-limit-cut.json")

// reasoningModel is the model the cassette was recorded from. It reasons
// only from what the loop shows it: it asks pod_status for the workload in
// the prompt, reads the failure word from the answer, and blames the change
// before onset whose aspects explain that failure and that touches the
// workload; as reviewer it keeps each cause whose quoted evidence holds.
type reasoningModel struct{}

func (reasoningModel) Name() string { return "reasoning-fixture/v1" }

var (
	workloadLine = regexp.MustCompile(`Workload: (\w+)/([a-z0-9-]+)/([a-z0-9-]+)`)
	changeLine   = regexp.MustCompile(`(?m)^\S+ \w+ (\w+)/([a-z0-9-]+)/([a-z0-9-]+) \S* → ([0-9a-f]{7,}) \([^)]*before onset\) changed=(\S+) touches=(\S+?)(?::|$).*$`)
	explains     = map[string]string{"OOMKilled": "resources", "ImagePullBackOff": "image", "ErrImagePull": "image", "CrashLoopBackOff": "config"}
)

func (reasoningModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	resp := model.Response{Message: model.Message{Role: model.RoleAssistant}, InputTokens: int64(len(fmt.Sprint(req.Messages)) / 4), OutputTokens: 60}
	call := func(name string, args any) (model.Response, error) {
		raw, err := json.Marshal(args)
		if err != nil {
			return resp, err
		}
		resp.Message.ToolCalls = []model.ToolCall{{ID: fmt.Sprintf("call-%d", len(req.Messages)), Name: name, Arguments: raw}}
		return resp, nil
	}
	first := req.Messages[0].Content
	for _, t := range req.Tools {
		if t.Name == "submit_review" {
			return call("submit_review", map[string]any{"reviews": []map[string]any{{"index": 0, "withdraw": false, "confidence": 0.85,
				"note": "the change precedes onset, touches the workload and its aspect explains the failure the pods report"}}})
		}
	}
	w := workloadLine.FindStringSubmatch(first)
	if w == nil {
		return resp, errors.New("reasoning fixture: the prompt names no workload")
	}
	workload := w[1] + "/" + w[2] + "/" + w[3]
	var podStatus string
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			podStatus += m.Content
		}
	}
	if podStatus == "" {
		return call("pod_status", map[string]string{"namespace": w[2], "workload": w[3]})
	}
	for word, aspect := range explains {
		if !strings.Contains(podStatus, word) {
			continue
		}
		var evidence string
		for _, line := range strings.Split(podStatus, "\n") {
			if strings.Contains(line, word) {
				evidence = "pod_status: " + strings.TrimSpace(line)
				break
			}
		}
		for _, m := range changeLine.FindAllStringSubmatch(first, -1) {
			if !strings.Contains(","+m[5]+",", ","+aspect+",") || !strings.Contains(","+m[6]+",", ","+workload+",") {
				continue
			}
			ref := m[1] + "/" + m[2] + "/" + m[3]
			return call("submit_findings", map[string]any{
				"verdict": "actionable",
				"rootCauses": []map[string]any{{
					"summary":    fmt.Sprintf("%s applied %s, which changed %s of %s; the pods then report %s", ref, m[4], aspect, workload, word),
					"confidence": 0.85,
					"change":     map[string]string{"kind": m[1], "namespace": m[2], "name": m[3], "toRevision": m[4]},
					"evidence":   []string{evidence, "what_changed: " + strings.TrimSpace(m[0])},
					"entities":   []string{ref, m[4], workload, word},
				}},
				"suggestedActions": []map[string]any{{"op": "rollback", "target": map[string]string{"kind": m[1], "namespace": m[2], "name": m[3]}, "reason": "revert " + m[4]}},
			})
		}
	}
	return call("submit_findings", map[string]any{"verdict": "inconclusive", "rootCauses": []any{}, "unresolved": []string{"no change before onset explains what the pods report"}})
}

func cassetteEngine(c client.Client, p model.Provider) EngineFor {
	return func(s Scenario) *investigate.Engine {
		now := func() time.Time { return s.Now }
		kube := &tools.Kube{Client: c, Now: now}
		return &investigate.Engine{Tools: tools.NewRegistry(kube.Tools()...), Provider: p, Now: now}
	}
}

// TestScenarioReplaysFromTheCommittedCassette runs oom-after-memory-limit-cut
// end to end through the cassette provider: every model request the loop
// and the reviewer make must be in the committed recording (a request that
// is not fails loudly), the scenario must pass, and two replays must agree
// case for case.
func TestScenarioReplaysFromTheCommittedCassette(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	s, err := LoadScenario(filepath.Join(scenarioDir, "oom-after-memory-limit-cut"))
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()

	if *updateCassette {
		rec := model.Record(cassettePath, reasoningModel{})
		_, err := Run(ctx, cfg, c, []Scenario{s}, cassetteEngine(c, rec))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rec.Save()).To(Succeed())
	}

	replay := func() Report {
		cassette, err := model.Replay(cassettePath)
		g.Expect(err).NotTo(HaveOccurred())
		r, err := Run(ctx, cfg, c, []Scenario{s}, cassetteEngine(c, cassette))
		g.Expect(err).NotTo(HaveOccurred())
		return r
	}
	first, second := replay(), replay()
	g.Expect(first.Cases).To(HaveLen(1))
	cs := first.Cases[0]
	g.Expect(cs.Error).To(BeEmpty())
	g.Expect(cs.Passed).To(BeTrue(), "%+v", cs)
	// The investigation's two calls (tool call, submit) are counted; the
	// reviewer's call through the pipeline's Verify step is replayed (the
	// top cause carries the reviewer's confidence) but not yet counted.
	g.Expect(first.ModelCalls).To(BeNumerically(">=", 2), "investigate twice (tool call, submit)")
	g.Expect(first.Cases[0].Confidence).To(Equal("0.85"), "the recorded reviewer's confidence")
	g.Expect(first.Tokens).To(BeNumerically(">", 0))
	for _, r := range []*Report{&first, &second} {
		r.MedianDurationMS = 0
		for i := range r.Cases {
			r.Cases[i].DurationMS, r.Cases[i].Phases = 0, nil
			// Each run serves the scenario's fleet on a port of its own:
			// the top cause names that repository (its changeRef, the
			// revert's), which is all that may differ between replays.
			f := r.Cases[i].Finding
			g.Expect(f).NotTo(BeNil())
			g.Expect(f.RootCauses).NotTo(BeEmpty())
			g.Expect(f.RootCauses[0].ChangeRef).NotTo(BeNil())
			g.Expect(f.RootCauses[0].ChangeRef.Repository).To(MatchRegexp(`^`+servedFleet.String()+`$`),
				"the cause names the fleet repository the GitRepository follows")
			raw, err := json.Marshal(f)
			g.Expect(err).NotTo(HaveOccurred())
			r.Cases[i].Finding = &runlorev1.Finding{}
			g.Expect(json.Unmarshal(servedFleet.ReplaceAll(raw, []byte("FLEET")), r.Cases[i].Finding)).To(Succeed())
		}
	}
	g.Expect(second).To(Equal(first))

	// The harness really asks the cassette: a scenario it never recorded
	// finds no answer.
	other, err := LoadScenario(filepath.Join(scenarioDir, "crashloop-after-config-change"))
	g.Expect(err).NotTo(HaveOccurred())
	cassette, err := model.Replay(cassettePath)
	g.Expect(err).NotTo(HaveOccurred())
	r, err := Run(ctx, cfg, c, []Scenario{other}, cassetteEngine(c, cassette))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Cases[0].Error).To(ContainSubstring(model.ErrNoRecording.Error()))
	g.Expect(r.Cases[0].Passed).To(BeFalse())
}
