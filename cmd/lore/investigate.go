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

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/scheme"
)

// runInvestigate files an Incident by hand and follows it to its answer:
// the same path an alert takes, started from the command line.
func runInvestigate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("investigate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	alert := fs.String("alert", "", "the symptom, in a sentence (required)")
	namespace := fs.String("namespace", "default", "namespace of the workload and of the Incident")
	workload := fs.String("workload", "", "the workload, as kind/name (e.g. deployment/api)")
	severity := fs.String("severity", "critical", "severity of the Incident")
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; the usual loading rules when empty")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	inc, err := manualIncident(*alert, *namespace, *workload, *severity, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "lore investigate:", err)
		return 2
	}
	rc, err := restConfig(*kubeconfig)
	if err != nil {
		fmt.Fprintln(stderr, "lore investigate: loading kubeconfig:", err)
		return 1
	}
	c, err := client.New(rc, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Fprintln(stderr, "lore investigate:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := c.Create(ctx, inc); err != nil {
		fmt.Fprintln(stderr, "lore investigate: creating the incident:", err)
		return 1
	}
	fmt.Fprintf(stdout, "incident.runlore.io/%s created in %s; waiting for RunLore to answer\n", inc.Name, inc.Namespace)
	if _, err := follow(ctx, c, client.ObjectKeyFromObject(inc), "", stdout, nil); err != nil {
		fmt.Fprintln(stderr, "lore investigate:", err)
		return 1
	}
	return 0
}

// manualIncident builds the Incident a person files with lore investigate.
func manualIncident(alert, namespace, workload, severity string, now time.Time) (*runlorev1.Incident, error) {
	alert = strings.TrimSpace(alert)
	if alert == "" {
		return nil, errors.New("--alert is required: describe the symptom in a sentence")
	}
	if len(alert) > 512 {
		return nil, errors.New("--alert is longer than 512 bytes")
	}
	inc := &runlorev1.Incident{Spec: runlorev1.IncidentSpec{
		Source: runlorev1.SourceManual, Title: alert, Severity: severity,
		StartsAt: &metav1.Time{Time: now.Truncate(time.Second)},
	}}
	inc.Namespace = namespace
	if workload != "" {
		kind, name, ok := strings.Cut(workload, "/")
		if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("--workload %q: want kind/name, such as deployment/api", workload)
		}
		inc.Spec.Workload = &runlorev1.Workload{Namespace: namespace, Kind: canonicalKind(kind), Name: name}
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%s|%d", alert, namespace, workload, now.UnixNano())))
	inc.Spec.Fingerprint = "manual:" + hex.EncodeToString(sum[:8])
	inc.Name = "manual-" + hex.EncodeToString(sum[:8])
	return inc, nil
}

func canonicalKind(kind string) string {
	switch strings.ToLower(kind) {
	case "deployment", "deploy":
		return "Deployment"
	case "statefulset", "sts":
		return "StatefulSet"
	case "daemonset", "ds":
		return "DaemonSet"
	case "job":
		return "Job"
	case "cronjob":
		return "CronJob"
	case "pod", "po":
		return "Pod"
	case "kustomization", "ks":
		return "Kustomization"
	case "helmrelease", "hr":
		return "HelmRelease"
	}
	return kind
}

// follow polls the Incident until an Investigation other than previous
// settles, reporting each phase change through onChange (or a line on out),
// then prints the finding and returns the Investigation.
func follow(ctx context.Context, c client.Client, key client.ObjectKey, previous string, out io.Writer, onChange func() error) (*runlorev1.Investigation, error) {
	last := ""
	for {
		inc := &runlorev1.Incident{}
		if err := c.Get(ctx, key, inc); err != nil {
			return nil, err
		}
		inv := &runlorev1.Investigation{}
		invPhase := ""
		if inc.Status.Investigation != "" {
			if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: inc.Status.Investigation}, inv); err == nil {
				invPhase = string(inv.Status.Phase)
			}
		}
		if state := string(inc.Status.Phase) + "/" + invPhase; state != last && inc.Status.Investigation != previous {
			last = state
			if onChange != nil {
				if err := onChange(); err != nil {
					return nil, err
				}
			} else {
				fmt.Fprintf(out, "  incident %s, investigation %s\n", orDash(string(inc.Status.Phase)), orDash(invPhase))
			}
		}
		done := inv.Status.Phase == runlorev1.InvestigationCompleted || inv.Status.Phase == runlorev1.InvestigationFailed
		if settled(inc.Status.Phase) && done && inc.Status.Investigation != previous {
			return inv, printFinding(out, inc, inv)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer yet (incident phase %s, occurrence %d, investigation %s): %w",
				orDash(string(inc.Status.Phase)), inc.Status.Occurrences, orDash(inc.Status.Investigation), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func settled(p runlorev1.IncidentPhase) bool {
	switch p {
	case "", runlorev1.IncidentPending, runlorev1.IncidentInvestigating:
		return false
	}
	return true
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
