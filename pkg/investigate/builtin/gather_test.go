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

package builtin

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// kindsSeen is a workload_tree that records the kinds it is asked for.
type kindsSeen struct{ kinds []string }

func (k *kindsSeen) Name() string                { return "workload_tree" }
func (k *kindsSeen) Description() string         { return "records the kinds asked for" }
func (k *kindsSeen) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (k *kindsSeen) Run(_ context.Context, args json.RawMessage) (tools.Result, error) {
	var a struct{ Kind string }
	_ = json.Unmarshal(args, &a)
	k.kinds = append(k.kinds, a.Kind)
	return tools.Result{Text: "ok"}, nil
}

// TestWorkloadTreeOnlyForControllerKinds: a HelmRelease, CronJob or Pod
// subject is read through the graph, never asked of workload_tree, so no
// "not supported" line lands among a finding's unresolved.
func TestWorkloadTreeOnlyForControllerKinds(t *testing.T) {
	g := NewWithT(t)
	for kind, asked := range map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Job": true,
		"HelmRelease": false, "Kustomization": false, "CronJob": false, "Pod": false} {
		tree := &kindsSeen{}
		req := incident.Request{AlertName: "A", Namespace: "shop", WorkloadKind: kind, Workload: "checkout", Start: time.Now()}
		_, err := Gather(context.Background(), tools.NewRegistry(tree), req)
		g.Expect(err).NotTo(HaveOccurred())
		if asked {
			g.Expect(tree.kinds).To(Equal([]string{kind}), kind)
		} else {
			g.Expect(tree.kinds).To(BeEmpty(), kind)
		}
	}
}
