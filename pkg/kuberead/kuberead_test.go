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

package kuberead

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stuck is a reader that never answers and ignores its context, the worst
// a backend can do.
type stuck struct{ calls chan struct{} }

func (s stuck) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	s.calls <- struct{}{}
	select {}
}

func (s stuck) List(context.Context, client.ObjectList, ...client.ListOption) error {
	s.calls <- struct{}{}
	select {}
}

// answering returns err, or fills the object, and records the list options.
type answering struct {
	err   error
	limit int64
}

func (a *answering) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if a.err != nil {
		return a.err
	}
	obj.SetName(key.Name)
	obj.SetNamespace(key.Namespace)
	obj.SetLabels(map[string]string{"read": "yes"})
	return nil
}

func (a *answering) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if a.err != nil {
		return a.err
	}
	a.limit = (&client.ListOptions{}).ApplyOptions(opts).Limit
	if pl, ok := list.(*corev1.PodList); ok {
		pl.Items = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
		pl.Continue = "more"
	}
	return nil
}

func TestDeadlineReturnsFromAReaderThatIgnoresItsContext(t *testing.T) {
	s := stuck{calls: make(chan struct{}, 2)}
	r := &Reader{Reader: s, Timeout: 50 * time.Millisecond}
	var pod corev1.Pod
	err := r.Get(context.Background(), client.ObjectKey{Namespace: "payments", Name: "api-0"}, &pod)
	<-s.calls
	u, ok := AsUnavailable(err)
	if !ok {
		t.Fatalf("Get: want *Unavailable, got %v", err)
	}
	if u.Reason != ReasonTimedOut || u.Resource != "pods" || u.Namespace != "payments" {
		t.Fatalf("Get: got %+v", u)
	}
	if want := "timed out after 50ms trying to get pods in payments (api-0)"; err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	if pod.Name != "" {
		t.Fatalf("a timed-out read wrote into the caller's object: %q", pod.Name)
	}

	var secrets metav1.PartialObjectMetadataList
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err = r.List(context.Background(), &secrets, client.InNamespace("payments"))
	<-s.calls
	if want := "timed out after 50ms trying to list secrets in payments"; err == nil || err.Error() != want {
		t.Fatalf("List: %v, want %q", err, want)
	}
}

func TestCallerCancellationIsNotASourceFailure(t *testing.T) {
	s := stuck{calls: make(chan struct{}, 1)}
	r := &Reader{Reader: s, Timeout: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.calls; cancel() }()
	err := r.List(ctx, &corev1.PodList{}, client.InNamespace("payments"))
	if IsUnavailable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want the caller's cancellation, got %v", err)
	}
}

func TestForbiddenNamesThePermission(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "",
		errors.New(`User "system:serviceaccount:runlore-system:runlore" cannot list resource "secrets"`))
	r := New(&answering{err: forbidden}, time.Second)
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err := r.List(context.Background(), &list, client.InNamespace("payments"))
	if want := "not permitted to list secrets in payments"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if !apierrors.IsForbidden(err) {
		t.Fatal("the API error must stay visible to apierrors.IsForbidden")
	}

	// The server's answer names the resource even when the object does not.
	fluxForbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations"}, "", errors.New("no"))
	err = New(&answering{err: fluxForbidden}, time.Second).List(context.Background(), &corev1.PodList{})
	if want := "not permitted to list kustomizations.kustomize.toolkit.fluxcd.io cluster-wide"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}

	unauthorized := apierrors.NewUnauthorized("token expired")
	err = New(&answering{err: unauthorized}, time.Second).Get(context.Background(), client.ObjectKey{Name: "n1"}, &corev1.Node{})
	u, ok := AsUnavailable(err)
	if !ok || u.Reason != ReasonUnauthorized || !strings.HasPrefix(err.Error(), "not permitted to get nodes cluster-wide (n1)") {
		t.Fatalf("got %v", err)
	}
}

func TestOtherErrorsPassThrough(t *testing.T) {
	nf := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "gone")
	err := New(&answering{err: nf}, time.Second).Get(context.Background(), client.ObjectKey{Namespace: "x", Name: "gone"}, &corev1.Pod{})
	if !apierrors.IsNotFound(err) || IsUnavailable(err) {
		t.Fatalf("NotFound must pass through unchanged, got %v", err)
	}
	joined := errors.Join(errors.New("other"), Classify(Target{Verb: "get", Resource: "secrets", Namespace: "ns"},
		apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "db", errors.New("no"))))
	if u, ok := AsUnavailable(joined); !ok || u.Name != "" || u.Resource != "secrets" {
		t.Fatalf("AsUnavailable on a joined error: %v %+v", ok, u)
	}
}

func TestReadsCopyBackAndListsAreBounded(t *testing.T) {
	a := &answering{}
	r := &Reader{Reader: a, Timeout: time.Second, MaxListItems: 7}
	var cm corev1.ConfigMap
	if err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "cfg"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "cfg" || cm.Labels["read"] != "yes" {
		t.Fatalf("Get did not fill the caller's object: %+v", cm.ObjectMeta)
	}
	var pods corev1.PodList
	if err := r.List(context.Background(), &pods, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if a.limit != 7 || len(pods.Items) != 1 || !Truncated(&pods, 7) {
		t.Fatalf("limit %d, items %d, truncated %v", a.limit, len(pods.Items), Truncated(&pods, 7))
	}
	// controller-runtime's cache reader sets the same token on every list.
	pods.Continue = "continue-not-supported"
	if Truncated(&pods, 7) {
		t.Fatal("a cached list below its limit is not truncated")
	}
	var empty corev1.PodList
	empty.Continue = "continue-not-supported"
	if Truncated(&empty, 200) {
		t.Fatal("an empty cached list is not truncated")
	}
	if !Truncated(&pods, 1) {
		t.Fatal("a cached list at its limit may be truncated")
	}
	if err := r.List(context.Background(), &pods, client.Limit(3)); err != nil || a.limit != 3 {
		t.Fatalf("a caller's own limit must be kept: %d %v", a.limit, err)
	}
	r.MaxListItems = -1
	if err := r.List(context.Background(), &pods); err != nil || a.limit != 0 {
		t.Fatalf("a negative MaxListItems sets no limit: %d %v", a.limit, err)
	}
}

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"Pod": "pods", "Secret": "secrets", "ConfigMap": "configmaps", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
		"Endpoints": "endpoints", "Gateway": "gateways", "HorizontalPodAutoscaler": "horizontalpodautoscalers",
	} {
		if got := Plural(kind); got != want {
			t.Errorf("Plural(%s) = %s, want %s", kind, got, want)
		}
	}
}
