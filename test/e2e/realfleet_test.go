//go:build cluster

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

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The fleet repository the real cluster's Flux follows: a bare git
// repository served by git's own smart-HTTP server (git http-backend, run
// through net/http/cgi) on the node's address, behind basic auth, so that
// source-controller on the host and RunLore in its Pod both clone it over
// the network as they would a forge. The test commits to it as a person
// does: in a working clone, pushed to the bare repository.

const (
	fleetUser     = "fleet-reader"
	fleetPassword = "e2e-fleet-password"
	fleetSecret   = "fleet-auth"
	// fleetNamespace holds the applications' Kustomizations, as a fleet
	// that gives its tenants' Kustomizations a namespace of their own lays
	// them out; the GitRepository stays in flux-system. RunLore never acts
	// on flux-system, so an action on a Kustomization needs one elsewhere.
	fleetNamespace = "fleet"
)

type fleetServer struct {
	root string // holds fleet.git
	work string // the working clone commits are made in
	url  string // the repository's URL as Flux and RunLore reach it
	base string // the server's URL
	srv  *http.Server

	// mu guards clients, shared by the repositories one server serves.
	mu *sync.Mutex
	// clients are the remote addresses that fetched a repository, by
	// "<repository>.git <User-Agent>".
	clients map[string]map[string]bool
}

func nodeIP() string {
	if ip := os.Getenv("RUNLORE_CLUSTER_NODE_IP"); ip != "" {
		return ip
	}
	return "10.213.0.1"
}

// startFleet serves an empty fleet repository on the node's address.
func startFleet(t *testing.T) *fleetServer {
	t.Helper()
	dir := t.TempDir()
	f := &fleetServer{root: filepath.Join(dir, "srv"), work: filepath.Join(dir, "work"), mu: &sync.Mutex{}, clients: map[string]map[string]bool{}}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	f.initRepository(t, "fleet")

	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Root: "/",
		Dir:  f.root,
		Env:  []string{"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(nodeIP(), "0"))
	if err != nil {
		t.Fatalf("the fleet server cannot listen on the node address: %v", err)
	}
	f.url = fmt.Sprintf("http://%s/fleet.git", ln.Addr().String())
	f.base = "http://" + ln.Addr().String()
	f.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != fleetUser || pass != fleetPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="fleet"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		// Only reads: a push goes to the bare repository on disk.
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
			http.Error(w, "read-only", http.StatusForbidden)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			key := repo + " " + r.UserAgent()
			f.mu.Lock()
			if f.clients[key] == nil {
				f.clients[key] = map[string]bool{}
			}
			f.clients[key][host] = true
			f.mu.Unlock()
		}
		backend.ServeHTTP(w, r)
	})}
	go func() {
		if err := f.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("fleet server: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.srv.Shutdown(ctx)
	})
	return f
}

// initRepository makes the bare repository name.git under the server's
// root and a working clone of it in f.work.
func (f *fleetServer) initRepository(t *testing.T, name string) {
	t.Helper()
	bare := filepath.Join(f.root, name+".git")
	f.git(t, "", "init", "-q", "--bare", "-b", "main", bare)
	f.git(t, "", "init", "-q", "-b", "main", f.work)
	f.git(t, f.work, "remote", "add", "origin", bare)
}

// repository serves another repository, name.git, from the same server,
// behind the same credentials: a catalog beside the fleet, as on one forge.
func (f *fleetServer) repository(t *testing.T, name string) *fleetServer {
	t.Helper()
	r := &fleetServer{root: f.root, work: filepath.Join(t.TempDir(), name), url: f.base + "/" + name + ".git", base: f.base,
		srv: f.srv, mu: f.mu, clients: f.clients}
	r.initRepository(t, name)
	return r
}

// git runs git in dir with a fixed identity and no user or system config.
func (f *fleetServer) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Operator", "GIT_AUTHOR_EMAIL=ada@fleet.test",
		"GIT_COMMITTER_NAME=Ada Operator", "GIT_COMMITTER_EMAIL=ada@fleet.test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (path → content; empty content removes the file),
// commits them with message and pushes; it returns the commit's hash.
func (f *fleetServer) commit(t *testing.T, message string, files map[string]string) string {
	t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(f.work, p)
		if files[p] == "" {
			f.git(t, f.work, "rm", "-q", p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		f.git(t, f.work, "add", p)
	}
	f.git(t, f.work, "commit", "-q", "-m", message)
	f.git(t, f.work, "push", "-q", "origin", "main")
	return f.git(t, f.work, "rev-parse", "HEAD")
}

// revert reverts a commit and pushes; it returns the revert's hash.
func (f *fleetServer) revert(t *testing.T, commit string) string {
	t.Helper()
	f.git(t, f.work, "revert", "--no-edit", commit)
	f.git(t, f.work, "push", "-q", "origin", "main")
	return f.git(t, f.work, "rev-parse", "HEAD")
}

// fetchedFrom reports the remote addresses that fetched each repository,
// by "<repository>.git <User-Agent>".
func (f *fleetServer) fetchedFrom() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]string{}
	for ua, hosts := range f.clients {
		for h := range hosts {
			out[ua] = append(out[ua], h)
		}
		sort.Strings(out[ua])
	}
	return out
}

// fleetWeb is the fleet's web Deployment: one line per field a commit
// changes, so each fault's commit is a one-field diff.
type fleetWeb struct {
	namespace    string
	image        string
	memoryLimit  string
	probePort    int
	replicas     int
	nodeSelector string // "key: value", or empty
	config       bool   // the program reads its port from web.conf (a generated ConfigMap)
}

func defaultWeb(ns string) fleetWeb {
	return fleetWeb{namespace: ns, image: registry() + "/web:e2e", memoryLimit: "128Mi", probePort: 8080, replicas: 1}
}

func (w fleetWeb) manifest() string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
  labels:
    app: web
spec:
  replicas: %d
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: 1
      enableServiceLinks: false
`, w.namespace, w.replicas)
	if w.nodeSelector != "" {
		fmt.Fprintf(&b, "      nodeSelector:\n        %s\n", w.nodeSelector)
	}
	fmt.Fprintf(&b, `      containers:
      - name: app
        image: %s
        imagePullPolicy: IfNotPresent
        env:
`, w.image)
	if w.config {
		b.WriteString("        - name: CONFIG_FILE\n          value: /etc/web/web.conf\n")
	} else {
		b.WriteString("        - name: PORT\n          value: \"8080\"\n")
	}
	fmt.Fprintf(&b, `        - name: MEMORY_MIB
          value: "48"
        resources:
          requests:
            memory: 16Mi
          limits:
            memory: %s
        readinessProbe:
          httpGet:
            path: /readyz
            port: %d
          periodSeconds: 2
          failureThreshold: 1
`, w.memoryLimit, w.probePort)
	if w.config {
		b.WriteString(`        volumeMounts:
        - name: config
          mountPath: /etc/web
      volumes:
      - name: config
        configMap:
          name: web-config
`)
	}
	return b.String()
}

func namespaceManifest(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
}

// initialFleet is the first commit: each fault's namespace and healthy web
// Deployment under apps/<fault>/, the quota namespace's ResourceQuota, and
// the config namespace's web.conf turned into a ConfigMap by kustomize.
func initialFleet(faults []string) map[string]string {
	files := map[string]string{}
	for _, ns := range faults {
		dir := "apps/" + ns + "/"
		files[dir+"namespace.yaml"] = namespaceManifest(ns)
		w := defaultWeb(ns)
		switch ns {
		case "config":
			w.config = true
			files[dir+"web.conf"] = "# the web service's settings\nport=8080\n"
			files[dir+"kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- namespace.yaml
- web.yaml
configMapGenerator:
- name: web-config
  namespace: config
  files:
  - web.conf
`
		case "quota":
			files[dir+"quota.yaml"] = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: pods
  namespace: quota
spec:
  hard:
    pods: "2"
`
		}
		files[dir+"web.yaml"] = w.manifest()
	}
	return files
}

// installFlux points Flux at the fleet: the basic-auth Secret and one
// GitRepository in flux-system, and one Kustomization per fault namespace
// (./apps/<ns>) in fleetNamespace, as a fleet of one Kustomization per
// application is laid out.
func installFlux(t *testing.T, c client.Client, f *fleetServer, faults []string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNamespace}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fleetSecret, Namespace: "flux-system"},
		StringData: map[string]string{"username": fleetUser, "password": fleetPassword}})).To(Succeed())
	g.Expect(c.Create(ctx, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.url, Interval: metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			SecretRef: &meta.LocalObjectReference{Name: fleetSecret},
		},
	})).To(Succeed())
	for _, ns := range faults {
		g.Expect(c.Create(ctx, &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: fleetNamespace},
			Spec: kustomizev1.KustomizationSpec{
				Interval: metav1.Duration{Duration: time.Minute}, Path: "./apps/" + ns, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet", Namespace: "flux-system"},
			},
		})).To(Succeed())
	}
}

// requestReconcile asks Flux to fetch the fleet now, as `flux reconcile
// source git fleet` does, instead of at the next interval.
func requestReconcile(t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	repo := &sourcev1.GitRepository{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "fleet"}, repo)).To(Succeed())
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[meta.ReconcileRequestAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
	g.Expect(c.Patch(context.Background(), repo, patch)).To(Succeed())
}

// waitApplied waits until every Kustomization of the fleet applied commit.
func waitApplied(t *testing.T, c client.Client, faults []string, commit string, within time.Duration) {
	t.Helper()
	g := NewWithT(t)
	for _, ns := range faults {
		g.Eventually(func(g Gomega) {
			ks := &kustomizev1.Kustomization{}
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: fleetNamespace, Name: ns}, ks)).To(Succeed())
			g.Expect(ks.Status.LastAppliedRevision).To(Equal("main@sha1:"+commit), "Kustomization %s: %+v", ns, ks.Status.Conditions)
		}, within, 500*time.Millisecond).Should(Succeed())
	}
}
