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
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The payments/api fault `lore demo` seeds and the installed suite
// replays: a fleet repository whose last commit cut api's memory limit,
// applied by a Flux Kustomization.

// FleetManifest is payments/api as the fleet repository declares it, with
// the given memory request and limit.
func FleetManifest(memory string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: payments
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: registry.example.com/payments/api:1.42.0
          env:
            - {name: JAVA_TOOL_OPTIONS, value: "-Xmx512m"}
          resources:
            requests: {cpu: 100m, memory: %[1]s}
            limits: {memory: %[1]s}
`, memory)
}

// FleetHistory is the fleet repository: payments/api deployed hours before
// now, then its memory limit cut minutes before the alert.
func FleetHistory(now time.Time) GitHistory {
	before, after := FleetManifest("512Mi"), FleetManifest("256Mi")
	return GitHistory{Commits: []GitCommit{
		{Message: "payments/api: deploy 1.42.0", Author: "Dana Dev <dana@example.com>", Time: now.Add(-3 * time.Hour),
			Files: map[string]*string{"apps/payments/api.yaml": &before}},
		{Message: "payments/api: cut the memory limit to 256Mi to fit more pods per node", Author: "Sam Sizing <sam@example.com>",
			Time: now.Add(-10 * time.Minute), Files: map[string]*string{"apps/payments/api.yaml": &after}},
	}}
}

// FluxObjects are what Flux holds in flux-system after applying the
// fleet's last commit (revision after, on top of before): the
// GitRepository at url (reading it with secret when one is named), and the
// Kustomization's history and inventory.
func FluxObjects(url, before, after string, now time.Time, secret string) string {
	secretRef := ""
	if secret != "" {
		secretRef = "  secretRef: {name: " + secret + "}\n"
	}
	applied := now.Add(-2 * time.Minute).Format(time.RFC3339)
	return fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system}
spec:
  interval: 1m
  url: %[1]s/fleet/.git
  ref: {branch: main}
%[6]s---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: fleet}
status:
  lastAppliedRevision: %[3]s
  inventory:
    entries: [{id: payments_api_apps_Deployment, v: v1}]
  history:
  - digest: sha256:5b1e0d6ac1f2f3c1ac1d7c0c3a0a54d39a5e1a0d9b3c1f0e2a4b6c8d0e1f2a3b
    firstReconciled: "%[4]s"
    lastReconciled: "%[4]s"
    lastReconciledDuration: 2s
    lastReconciledStatus: ReconciliationSucceeded
    totalReconciliations: 1
    metadata: {revision: "%[3]s"}
  - digest: sha256:0a9f8e7d6c5b4a3928170615243342516071829304a5b6c7d8e9f0a1b2c3d4e5
    firstReconciled: "%[5]s"
    lastReconciled: "%[4]s"
    lastReconciledDuration: 2s
    lastReconciledStatus: ReconciliationSucceeded
    totalReconciliations: 18
    metadata: {revision: "%[2]s"}
`, url, before, after, applied, now.Add(-3*time.Hour).Format(time.RFC3339), secretRef)
}

// CommitFile writes one file into the repository at dir (created on first
// use) and commits it on main, as a reviewer merging a pull request would.
func CommitFile(dir, path, body, message string) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		repo, err = git.PlainInitWithOptions(dir, &git.PlainInitOptions{
			InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(body), 0o644); err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	if _, err := wt.Add(path); err != nil {
		return err
	}
	sig := &object.Signature{Name: "On-call reviewer", Email: "oncall@example.com", When: time.Now()}
	_, err = wt.Commit(message, &git.CommitOptions{Author: sig, Committer: sig})
	return err
}
