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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/argocd"
	awschanges "github.com/runlore/runlore/pkg/whatchanged/aws"
	"github.com/runlore/runlore/pkg/whatchanged/flux"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/kube"
)

const whatChangedUsage = `usage: lore whatchanged --namespace NS [--workload KIND/NAME] [--since 2h] [--start RFC3339]
                        [--json] [--aws] [--kubeconfig PATH] [--cache-dir DIR] [--max-bytes N]

Prints the ranked timeline of what changed around a workload: Flux and Argo CD
revisions with their git diff, Kubernetes rollouts and ConfigMap/Secret edits,
and (with --aws) CloudTrail calls. Changes after --start are marked as unable
to have caused the incident.
`

// runWhatChanged runs `lore whatchanged`. It returns 0 on success, 2 on a
// usage error and 1 when the timeline could not be built.
func runWhatChanged(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whatchanged", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, whatChangedUsage); fs.PrintDefaults() }
	namespace := fs.String("namespace", "", "namespace of the affected workload (required)")
	workload := fs.String("workload", "", "affected workload as kind/name, such as deployment/api")
	since := fs.Duration("since", 2*time.Hour, "how far before the start to look")
	startFlag := fs.String("start", "", "incident start, RFC 3339 (default: now)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	withAWS := fs.Bool("aws", false, "include AWS CloudTrail through the default credential chain")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cacheDir := fs.String("cache-dir", "", "directory for git mirrors (default: the user cache dir)")
	maxBytes := fs.Int("max-bytes", 64<<10, "bound on the printed text")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "whatchanged: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	inc := whatchanged.Incident{Namespace: *namespace, Start: time.Now()}
	if *namespace == "" {
		fmt.Fprintln(stderr, "whatchanged: --namespace is required")
		return 2
	}
	if *workload != "" {
		var err error
		if inc.Kind, inc.Name, err = whatchanged.ParseWorkload(*workload); err != nil {
			fmt.Fprintf(stderr, "whatchanged: --workload: %v\n", err)
			return 2
		}
	}
	if *startFlag != "" {
		t, err := time.Parse(time.RFC3339, *startFlag)
		if err != nil {
			fmt.Fprintf(stderr, "whatchanged: --start %q: want RFC 3339, such as 2026-11-30T02:00:00Z\n", *startFlag)
			return 2
		}
		inc.Start = t
	}
	if *since <= 0 {
		fmt.Fprintln(stderr, "whatchanged: --since must be positive")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	finder, err := whatChangedFinder(ctx, *kubeconfig, *cacheDir, *withAWS)
	if err != nil {
		fmt.Fprintf(stderr, "whatchanged: %v\n", err)
		return 1
	}
	rep, err := finder.Timeline(ctx, inc, *since)
	if err != nil {
		fmt.Fprintf(stderr, "whatchanged: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "whatchanged: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprint(stdout, rep.Text(*maxBytes))
	return 0
}

// whatChangedScheme holds the types the collectors read typed.
func whatChangedScheme() (*k8sruntime.Scheme, error) {
	s := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{clientgoscheme.AddToScheme, sourcev1.AddToScheme, kustomizev1.AddToScheme, helmv2.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func whatChangedFinder(ctx context.Context, kubeconfig, cacheDir string, withAWS bool) (*whatchanged.Finder, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	scheme, err := whatChangedScheme()
	if err != nil {
		return nil, err
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("--cache-dir: not given and no user cache dir: %w", err)
		}
		cacheDir = filepath.Join(base, "runlore", "git-mirrors")
	}
	mirrors, err := gitdiff.NewCache(cacheDir)
	if err != nil {
		return nil, err
	}
	f := &whatchanged.Finder{Collectors: []whatchanged.Collector{
		&flux.Collector{Client: k8s, Mirrors: mirrors},
		&argocd.Collector{Client: k8s, Mirrors: mirrors},
		&kube.Collector{Client: k8s},
	}}
	if withAWS {
		cloud, err := awschanges.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("--aws: %w", err)
		}
		f.Collectors = append(f.Collectors, cloud)
	}
	return f, nil
}
