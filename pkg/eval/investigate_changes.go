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
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/argocd"
	"github.com/runlore/runlore/pkg/whatchanged/flux"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/kube"
)

// loadCluster reads DIR/cluster/*.yaml in name order, points GitOps sources
// named git/<repo> at the built repositories, and loads the objects as a
// cluster recorded them (LoadRecorded).
func loadCluster(ctx context.Context, c client.Client, dir string, urls map[string]string) ([]*unstructured.Unstructured, error) {
	all, err := clusterstate.ReadDir(filepath.Join(dir, "cluster"))
	if err != nil {
		return nil, err
	}
	if err := pointAtRepositories(all, urls); err != nil {
		return nil, err
	}
	loaded, err := LoadRecorded(ctx, c, all)
	return loaded.Objects, err
}

// timelineOf computes a scenario's what-changed timeline the way the
// operator does: the Flux, Argo CD and Kubernetes collectors read the
// loaded objects (and diff the built repositories through mirrors), on the
// scenario's clock, converted as the pipeline converts it.
func timelineOf(ctx context.Context, c client.Reader, s Scenario, mirrors *gitdiff.Cache) ([]incident.Change, []string, error) {
	f := &whatchanged.Finder{
		Collectors: []whatchanged.Collector{
			&flux.Collector{Client: c, Mirrors: mirrors},
			&argocd.Collector{Client: c, Mirrors: mirrors},
			&kube.Collector{Client: c},
		},
		Now: func() time.Time { return s.Now },
	}
	inc := changeScope(s)
	if inc.Validate() != nil {
		// The pipeline reads no timeline for an incident it cannot scope
		// (no workload, namespace or node); neither does the eval.
		return nil, nil, nil
	}
	report, err := f.Timeline(ctx, inc, pipeline.DefaultWindow)
	if err != nil {
		return nil, nil, fmt.Errorf("what changed: %w", err)
	}
	return pipeline.ConvertChanges(report.Changes), report.Warnings, nil
}

// changeScope is the what-changed scope the pipeline gives the scenario's
// alert: the workload production intake names (identity.FromLabels, kept
// as whatchanged.FromIncident keeps it), else the namespace the alert says
// it is in (exported_namespace before namespace), else the node it names.
func changeScope(s Scenario) whatchanged.Incident {
	l := s.Alert.Labels
	inc := whatchanged.Incident{Start: s.Alert.StartsAt}
	if w := identity.FromLabels(l); w != nil {
		inc.Namespace, inc.Kind, inc.Name = w.Namespace, w.Kind, w.Name
		if inc.Kind == "" {
			inc.Name = ""
		}
	}
	if inc.Kind == "" && inc.Name == "" {
		switch {
		case l["exported_namespace"] != "":
			inc.Namespace = l["exported_namespace"]
		case l["namespace"] != "":
			inc.Namespace = l["namespace"]
		case l["node"] != "":
			inc.Kind, inc.Name = "Node", l["node"]
		}
	}
	return inc
}
