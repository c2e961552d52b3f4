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

// Package kuberead is the bounded way RunLore reads the Kubernetes API on an
// investigation's behalf. A Reader wraps any client.Reader (normally the
// manager's API reader, which never starts an informer) and gives every Get
// and List a deadline, a bound on how many items one List returns, and an
// honest answer when the identity may not read: a refused (401/403) or
// timed-out read becomes an *Unavailable error that names the permission,
// "not permitted to list secrets in payments", which callers report as a
// source they could not see rather than as evidence or a hang.
//
// A call that ignores its context still returns at the deadline: the read
// runs into a private copy of the object, and the caller's object is only
// written when the read finished in time.
package kuberead

import (
	"context"
	"errors"
	"fmt"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	runlorescheme "github.com/runlore/runlore/pkg/scheme"
)

// Defaults of a Reader.
const (
	// DefaultTimeout bounds one Get or List.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxListItems is the page size a List asks for when the caller
	// sets no limit: one investigation never holds a namespace's whole
	// history of a kind in memory.
	DefaultMaxListItems = 500
)

// Reader is a client.Reader whose every call runs under a deadline and
// whose refusals are *Unavailable errors. The zero value is not usable; set
// Reader.
type Reader struct {
	// Reader is the wrapped reader; use one that does not start informers
	// (the manager's API reader) for kinds RunLore does not watch.
	Reader client.Reader
	// Timeout bounds one call; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxListItems is the limit put on a List that sets none;
	// DefaultMaxListItems when zero, no limit when negative.
	MaxListItems int64
	// Scheme maps typed objects to their kind; RunLore's scheme when nil.
	Scheme *runtime.Scheme
}

// New wraps r with the given per-call timeout (DefaultTimeout when zero or
// negative). A nil r gives a nil Reader; a Reader given no timeout of its
// own is returned as it is.
func New(r client.Reader, timeout time.Duration) *Reader {
	if r == nil {
		return nil
	}
	if kr, ok := r.(*Reader); ok && (timeout <= 0 || kr.Timeout == timeout) {
		return kr
	}
	return &Reader{Reader: r, Timeout: timeout}
}

var _ client.Reader = (*Reader)(nil)

// Get reads one object under the deadline.
func (r *Reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.do(ctx, "get", obj, key.Namespace, key.Name, func(ctx context.Context, into runtime.Object) error {
		return r.Reader.Get(ctx, key, into.(client.Object), opts...)
	})
}

// List reads a list under the deadline, bounded to MaxListItems items when
// the caller set no limit. A bounded list that had more items has its
// continue token set; Truncated reports it.
func (r *Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.Limit == 0 && r.maxItems() > 0 {
		opts = append(append([]client.ListOption(nil), opts...), client.Limit(r.maxItems()))
	}
	return r.do(ctx, "list", list, lo.Namespace, "", func(ctx context.Context, into runtime.Object) error {
		return r.Reader.List(ctx, into.(client.ObjectList), opts...)
	})
}

// cacheContinue is the continue token controller-runtime's cache reader
// sets on every list it answers, truncated or not.
const cacheContinue = "continue-not-supported"

// Truncated reports whether a list read with the given limit stopped at
// it: the API server's continue token says so; the cache reader's token
// says nothing, and a list from the cache is truncated only when it holds
// limit items.
func Truncated(list client.ObjectList, limit int64) bool {
	switch c := list.GetContinue(); c {
	case "":
		return false
	case cacheContinue:
		return limit > 0 && int64(apimeta.LenList(list)) >= limit
	}
	return true
}

func (r *Reader) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

func (r *Reader) maxItems() int64 {
	if r.MaxListItems == 0 {
		return DefaultMaxListItems
	}
	return r.MaxListItems
}

func (r *Reader) do(parent context.Context, verb string, obj runtime.Object, namespace, name string, call func(context.Context, runtime.Object) error) error {
	if r == nil || r.Reader == nil {
		return errors.New("kuberead: no reader")
	}
	timeout := r.timeout()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	into := obj.DeepCopyObject()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("kuberead: read panicked: %v", p)
			}
		}()
		done <- call(ctx, into)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		dst, src := reflect.ValueOf(obj), reflect.ValueOf(into)
		if dst.Kind() == reflect.Pointer && src.Type() == dst.Type() {
			dst.Elem().Set(src.Elem())
			return nil
		}
		return fmt.Errorf("kuberead: cannot copy a %T into a %T", into, obj)
	}
	t := Target{Verb: verb, Namespace: namespace, Name: name}
	t.Group, t.Resource = r.resourceOf(obj)
	if parent.Err() != nil {
		// The caller gave up; that is not this source's fault.
		return fmt.Errorf("%s %s: %w", verb, t.resourceText(), parent.Err())
	}
	if err := Classify(t, err); IsUnavailable(err) || ctx.Err() == nil {
		return err
	}
	return &Unavailable{Target: t, Reason: ReasonTimedOut, Timeout: timeout, Err: err}
}

// resourceOf names the resource obj is read from: the lower-case plural of
// its kind, and its group.
func (r *Reader) resourceOf(obj runtime.Object) (group, resource string) {
	s := r.Scheme
	if s == nil {
		s = runlorescheme.Scheme
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		if g, err := apiutil.GVKForObject(obj, s); err == nil {
			gvk = g
		}
	}
	kind := strings.TrimSuffix(gvk.Kind, "List")
	if kind == "" {
		return gvk.Group, "objects"
	}
	return gvk.Group, Plural(kind)
}

// Plural is the resource name Kubernetes conventionally gives a kind.
func Plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "endpoints":
		return k
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// Target is one read: its verb, resource and where.
type Target struct {
	// Verb is get or list.
	Verb string
	// Group is the API group; empty for the core group.
	Group string
	// Resource is the plural resource name, e.g. secrets.
	Resource string
	// Namespace is empty for a cluster-scoped or all-namespaces read.
	Namespace string
	// Name is the object's name for a get.
	Name string
}

func (t Target) resourceText() string {
	if t.Group == "" {
		return t.Resource
	}
	return t.Resource + "." + t.Group
}

// where renders the scope: "in payments", or "cluster-wide".
func (t Target) where() string {
	if t.Namespace == "" {
		return "cluster-wide"
	}
	return "in " + t.Namespace
}

// Reason says why a source is unavailable.
type Reason string

// Reasons a read is unavailable.
const (
	// ReasonForbidden: the API server refused the identity (403).
	ReasonForbidden Reason = "Forbidden"
	// ReasonUnauthorized: the API server did not accept the credentials (401).
	ReasonUnauthorized Reason = "Unauthorized"
	// ReasonTimedOut: the read did not finish within its deadline.
	ReasonTimedOut Reason = "TimedOut"
)

// Unavailable is a read RunLore could not make: refused or timed out. Its
// message names the permission, "not permitted to list secrets in
// payments", so an operator knows which rule the identity lacks.
type Unavailable struct {
	Target
	Reason Reason
	// Timeout is the deadline a timed-out read ran under.
	Timeout time.Duration
	// Err is the underlying error; apierrors.IsForbidden still sees it.
	Err error
}

func (e *Unavailable) Error() string {
	res := e.resourceText()
	name := ""
	if e.Name != "" {
		name = " (" + e.Name + ")"
	}
	switch e.Reason {
	case ReasonTimedOut:
		return fmt.Sprintf("timed out after %s trying to %s %s %s%s", e.Timeout, e.Verb, res, e.where(), name)
	case ReasonUnauthorized:
		return fmt.Sprintf("not permitted to %s %s %s%s: the API server did not accept the credentials", e.Verb, res, e.where(), name)
	}
	return fmt.Sprintf("not permitted to %s %s %s%s", e.Verb, res, e.where(), name)
}

// Unwrap returns the underlying error.
func (e *Unavailable) Unwrap() error { return e.Err }

// AsUnavailable finds an *Unavailable in err's tree (joined errors too).
func AsUnavailable(err error) (*Unavailable, bool) {
	var u *Unavailable
	if errors.As(err, &u) {
		return u, true
	}
	return nil, false
}

// IsUnavailable reports whether err is, or wraps, an *Unavailable.
func IsUnavailable(err error) bool {
	_, ok := AsUnavailable(err)
	return ok
}

// Classify turns a 401 or 403 from the API server into an *Unavailable for
// t, taking the resource and group from the server's answer when it names
// them; any other error is returned unchanged.
func Classify(t Target, err error) error {
	if err == nil {
		return nil
	}
	reason := Reason("")
	switch {
	case apierrors.IsForbidden(err):
		reason = ReasonForbidden
	case apierrors.IsUnauthorized(err):
		reason = ReasonUnauthorized
	default:
		return err
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		// The server names the resource it refused; a subresource read
		// (pods/log) keeps its own, more precise name.
		if d := status.Status().Details; d != nil && d.Kind != "" && !strings.HasPrefix(t.Resource, d.Kind+"/") {
			t.Resource, t.Group = d.Kind, d.Group
		}
	}
	if t.Resource == "" {
		t.Resource = "objects"
	}
	return &Unavailable{Target: t, Reason: reason, Err: err}
}

// ForKind is the Target for a read of kind (e.g. "Secret") in group.
func ForKind(verb string, gvk schema.GroupVersionKind, namespace, name string) Target {
	return Target{Verb: verb, Group: gvk.Group, Resource: Plural(strings.TrimSuffix(gvk.Kind, "List")), Namespace: namespace, Name: name}
}
