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
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// loadTimeout bounds every wait of the loader (a CRD becoming Established,
// the client learning its kind).
const loadTimeout = 60 * time.Second

// Loaded is what loading one recorded state created.
type Loaded struct {
	// Objects are the objects as the API server holds them after loading,
	// in the order they were written.
	Objects []*unstructured.Unstructured
	// GeneratedCRDs name the schemaless CRDs made for kinds the API
	// server did not serve.
	GeneratedCRDs []string
}

// LoadRecorded writes a recorded cluster state into the API server behind c
// as a real cluster would hold it: kinds the server does not serve get a
// generated schemaless CRD; Namespace documents are created or, when the
// namespace exists, merged into it; server-allocated fields are dropped and
// finalizers stripped; owners are created before what they own and owner
// references point at the owners' new uids; status is written after create
// through the status subresource.
func LoadRecorded(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) (Loaded, error) {
	var out Loaded
	crds, err := ensureKinds(ctx, c, objs)
	out.GeneratedCRDs = crds
	if err != nil {
		return out, err
	}
	uids := map[ownerKey]types.UID{}
	// Pod Security admission judges a pod when it is created; a recorded
	// namespace's enforce level may be newer than the pods it holds, so the
	// level is written once everything else is in.
	enforce := map[string]map[string]string{}
	for _, obj := range creationOrder(objs) {
		ref := fmt.Sprintf("%s %s", obj.GetKind(), objectPath(obj))
		if ns := obj.GetNamespace(); ns != "" {
			if err := ensureNamespace(ctx, c, ns); err != nil {
				return out, err
			}
		}
		create, status, hasStatus := sanitize(obj)
		repointOwners(create, uids)
		terminating := obj.GetDeletionTimestamp() != nil
		if terminating {
			// A finalizer holds the object between the delete below and
			// the harness's reset, as the kubelet or a controller would.
			create.SetFinalizers(append(create.GetFinalizers(), terminatingFinalizer))
		}
		var written *unstructured.Unstructured
		if create.GetKind() == "Namespace" && create.GroupVersionKind().Group == "" {
			if held := holdEnforceLabels(create); len(held) > 0 {
				enforce[create.GetName()] = held
			}
			if written, err = createOrMergeNamespace(ctx, c, create); err != nil {
				return out, fmt.Errorf("%s: %w", ref, err)
			}
		} else {
			if err := c.Create(ctx, create); err != nil {
				return out, fmt.Errorf("create %s: %w", ref, err)
			}
			written = create
			if hasStatus {
				written.Object["status"] = status
				err := c.Status().Update(ctx, written)
				switch {
				case apierrors.IsNotFound(err):
					// No status subresource (Argo CD's Application has
					// none): status is written with the object itself.
					written.Object["status"] = status
					if err := c.Update(ctx, written); err != nil {
						return out, fmt.Errorf("write status of %s: %w", ref, err)
					}
				case err != nil:
					return out, fmt.Errorf("write status of %s: %w", ref, err)
				}
			}
		}
		if writeTimesRecorded(obj) {
			if written, err = restoreWriteTimes(ctx, c, written, obj.GetManagedFields()); err != nil {
				return out, fmt.Errorf("write the recorded managedFields of %s: %w", ref, err)
			}
		}
		if terminating {
			if written, err = markTerminating(ctx, c, written, obj.GetDeletionGracePeriodSeconds()); err != nil {
				return out, fmt.Errorf("mark %s terminating: %w", ref, err)
			}
		}
		uids[keyOf(written.GroupVersionKind().GroupKind(), written.GetNamespace(), written.GetName())] = written.GetUID()
		out.Objects = append(out.Objects, written)
	}
	for i, o := range out.Objects {
		held, ok := enforce[o.GetName()]
		if !ok || o.GetKind() != "Namespace" || o.GetNamespace() != "" {
			continue
		}
		ns := &unstructured.Unstructured{}
		ns.SetGroupVersionKind(o.GroupVersionKind())
		ns.SetName(o.GetName())
		ns.SetLabels(held)
		written, err := createOrMergeNamespace(ctx, c, ns)
		if err != nil {
			return out, fmt.Errorf("Namespace %s: write its Pod Security enforce labels: %w", o.GetName(), err)
		}
		out.Objects[i] = written
	}
	return out, nil
}

// holdEnforceLabels removes the Pod Security enforce level and version
// from a namespace about to be created and returns them.
func holdEnforceLabels(ns *unstructured.Unstructured) map[string]string {
	labels := ns.GetLabels()
	held := map[string]string{}
	for k, v := range labels {
		if k == "pod-security.kubernetes.io/enforce" || k == "pod-security.kubernetes.io/enforce-version" {
			held[k] = v
			delete(labels, k)
		}
	}
	if len(held) > 0 {
		ns.SetLabels(labels)
	}
	return held
}

func objectPath(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// sanitize returns the object to create (with nothing the server allocates
// or a controller would have to finish) and its recorded status.
func sanitize(obj *unstructured.Unstructured) (*unstructured.Unstructured, any, bool) {
	o := obj.DeepCopy()
	status, hasStatus := o.Object["status"]
	delete(o.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "generation", "selfLink",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	gk := o.GroupVersionKind().GroupKind()
	switch gk {
	case schema.GroupKind{Kind: "Service"}:
		if ip, _, _ := unstructured.NestedString(o.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(o.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(o.Object, "spec", "clusterIPs")
		} else {
			unstructured.RemoveNestedField(o.Object, "spec", "clusterIPs")
		}
		for _, f := range []string{"healthCheckNodePort", "ipFamilies", "ipFamilyPolicy"} {
			unstructured.RemoveNestedField(o.Object, "spec", f)
		}
		if ports, ok, _ := unstructured.NestedSlice(o.Object, "spec", "ports"); ok {
			for _, p := range ports {
				if m, ok := p.(map[string]any); ok {
					delete(m, "nodePort")
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
		}
	case schema.GroupKind{Kind: "Pod"}:
		if m, ok := status.(map[string]any); ok {
			m = deepCopyMap(m)
			delete(m, "qosClass")
			status = m
		}
		// Ephemeral containers are added through their own subresource.
		unstructured.RemoveNestedField(o.Object, "spec", "ephemeralContainers")
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		// kubectl records the selector and template labels the API server
		// generated from the Job's uid; the server generates them again
		// for the uid it allocates, and refuses a recorded one.
		if manual, _, _ := unstructured.NestedBool(o.Object, "spec", "manualSelector"); !manual {
			unstructured.RemoveNestedField(o.Object, "spec", "selector")
			unstructured.RemoveNestedField(o.Object, "spec", "manualSelector")
			for _, k := range uidLabels {
				unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "labels", k)
				unstructured.RemoveNestedField(o.Object, "metadata", "labels", k)
			}
		}
	case schema.GroupKind{Kind: "PersistentVolume"}:
		unstructured.RemoveNestedField(o.Object, "spec", "claimRef", "uid")
		unstructured.RemoveNestedField(o.Object, "spec", "claimRef", "resourceVersion")
	}
	if status == nil {
		hasStatus = false
	}
	return o, status, hasStatus
}

// terminatingFinalizer keeps a recorded terminating object terminating.
const terminatingFinalizer = "eval.runlore.io/recorded-terminating"

// markTerminating deletes a just-created object that was recorded with a
// deletionTimestamp, so the API server holds it as terminating (its own
// deletionTimestamp, at load time) until the harness resets; a pod keeps
// its recorded grace period.
func markTerminating(ctx context.Context, c client.Client, o *unstructured.Unstructured, grace *int64) (*unstructured.Unstructured, error) {
	var opts []client.DeleteOption
	if grace != nil {
		opts = append(opts, client.GracePeriodSeconds(*grace))
	}
	if err := c.Delete(ctx, o, opts...); err != nil {
		return nil, err
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(o.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
		return nil, err
	}
	return got, nil
}

// writeTimesRecorded reports whether the object carries managedFields as
// kubectl --show-managed-fields records them (each entry with its time and
// fields): they are restored after create, because they say when each
// writer last changed the object (an operator rotating a Secret), which
// nothing else records.
func writeTimesRecorded(o *unstructured.Unstructured) bool {
	entries, ok, _ := unstructured.NestedSlice(o.Object, "metadata", "managedFields")
	if !ok || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["time"] == nil || m["fieldsType"] != "FieldsV1" || m["fieldsV1"] == nil || m["manager"] == nil {
			return false
		}
	}
	return true
}

// restoreWriteTimes writes the recorded managedFields over the ones the
// create left: the API server takes managedFields an update sets
// explicitly as the new record.
func restoreWriteTimes(ctx context.Context, c client.Client, o *unstructured.Unstructured, recorded []metav1.ManagedFieldsEntry) (*unstructured.Unstructured, error) {
	o.SetManagedFields(recorded)
	if err := c.Update(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

type ownerKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func keyOf(gk schema.GroupKind, ns, name string) ownerKey {
	return ownerKey{gk: gk, namespace: ns, name: name}
}

func ownerKeyOf(o *unstructured.Unstructured, ref metav1.OwnerReference) ownerKey {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return keyOf(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, o.GetNamespace(), ref.Name)
}

// repointOwners sets each owner reference's uid to the owner created in
// this load; a reference to an owner the state does not hold keeps its
// recorded uid, or gets a stable one derived from the owner's identity when
// the recording had none (the API server requires one).
func repointOwners(o *unstructured.Unstructured, uids map[ownerKey]types.UID) {
	refs := o.GetOwnerReferences()
	if len(refs) == 0 {
		return
	}
	for i, r := range refs {
		k := ownerKeyOf(o, r)
		if uid, ok := uids[k]; ok {
			refs[i].UID = uid
			if r.Kind == "Job" && r.Controller != nil && *r.Controller {
				repointUIDLabels(o, uid)
			}
			continue
		}
		// An owner of a namespaced object may be cluster-scoped.
		if uid, ok := uids[keyOf(k.gk, "", k.name)]; ok {
			refs[i].UID = uid
			continue
		}
		if r.UID == "" {
			sum := sha256.Sum256([]byte(r.APIVersion + "/" + r.Kind + "/" + o.GetNamespace() + "/" + r.Name))
			refs[i].UID = types.UID(uuid.Must(uuid.FromBytes(sum[:16])).String())
		}
	}
	o.SetOwnerReferences(refs)
}

// uidLabels are the labels a Job stamps its pods with (and selects them by):
// its own uid, which the test server allocates anew.
var uidLabels = []string{"batch.kubernetes.io/controller-uid", "controller-uid"}

// repointUIDLabels sets the Job uid labels of a pod the Job controls to the
// uid the Job was created with, so the selector the API server generated
// for it still selects its recorded pods.
func repointUIDLabels(o *unstructured.Unstructured, created types.UID) {
	labels := o.GetLabels()
	changed := false
	for _, k := range uidLabels {
		if _, ok := labels[k]; ok {
			labels[k] = string(created)
			changed = true
		}
	}
	if changed {
		o.SetLabels(labels)
	}
}

// creationOrder puts Namespaces and CRDs first, then every other object
// after the owners it references (a stable topological order; a cycle keeps
// the recorded order).
func creationOrder(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	rank := func(o *unstructured.Unstructured) int {
		switch o.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Kind: "Namespace"}:
			return 0
		case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			return 1
		}
		return 2
	}
	sorted := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	index := map[ownerKey]int{}
	for i, o := range sorted {
		index[keyOf(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())] = i
	}
	var out []*unstructured.Unstructured
	state := make([]int, len(sorted)) // 0 new, 1 visiting, 2 done
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return
		}
		state[i] = 1
		o := sorted[i]
		for _, r := range o.GetOwnerReferences() {
			k := ownerKeyOf(o, r)
			j, ok := index[k]
			if !ok {
				j, ok = index[keyOf(k.gk, "", k.name)]
			}
			if ok {
				visit(j)
			}
		}
		state[i] = 2
		out = append(out, o)
	}
	for i := range sorted {
		visit(i)
	}
	return out
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// createOrMergeNamespace creates a recorded Namespace, or merges its labels
// and annotations into the namespace that already exists.
func createOrMergeNamespace(ctx context.Context, c client.Client, ns *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	unstructured.RemoveNestedField(ns.Object, "spec")
	err := c.Create(ctx, ns)
	if err == nil {
		return ns, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create: %w", err)
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(ns.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKey{Name: ns.GetName()}, cur); err != nil {
		return nil, fmt.Errorf("read the existing namespace: %w", err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	cur.SetLabels(mergeStrings(cur.GetLabels(), ns.GetLabels()))
	cur.SetAnnotations(mergeStrings(cur.GetAnnotations(), ns.GetAnnotations()))
	if err := c.Patch(ctx, cur, patch); err != nil {
		return nil, fmt.Errorf("merge into the existing namespace: %w", err)
	}
	return cur, nil
}

func mergeStrings(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// kindSpec is what the loader knows of a kind the server does not serve.
type kindSpec struct {
	gk         schema.GroupKind
	versions   []string
	namespaced bool
	clusterDoc string // a cluster-scoped document of the kind, if any
	nsDoc      string // a namespaced one, if any
}

// ensureKinds generates a schemaless CRD for every kind of objs the API
// server does not serve, and waits until each is Established and mapped.
func ensureKinds(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]string, error) {
	declared := map[schema.GroupKind]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			k, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			declared[schema.GroupKind{Group: g, Kind: k}] = true
		}
	}
	missing := map[schema.GroupKind]*kindSpec{}
	var order []schema.GroupKind
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		gk := gvk.GroupKind()
		if declared[gk] {
			continue
		}
		if ks, ok := missing[gk]; ok {
			ks.note(o)
			continue
		}
		if ok, err := served(ctx, c, gvk); err != nil {
			return nil, fmt.Errorf("look up %s: %w", gvk, err)
		} else if ok {
			continue
		}
		if gk.Group == "" {
			return nil, fmt.Errorf("%s %s: the API server has no core kind %q, and core kinds cannot be added", gvk.Kind, objectPath(o), gvk.Kind)
		}
		ks := &kindSpec{gk: gk}
		ks.note(o)
		missing[gk] = ks
		order = append(order, gk)
	}
	var names []string
	for _, gk := range order {
		ks := missing[gk]
		if ks.clusterDoc != "" && ks.nsDoc != "" {
			return names, fmt.Errorf("kind %s appears both cluster-scoped (%s) and namespaced (%s)", gk, ks.clusterDoc, ks.nsDoc)
		}
		crd := schemalessCRD(ks)
		if err := c.Create(ctx, crd); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return names, fmt.Errorf("kind %s version %s: a CRD %s exists but does not serve it", gk, strings.Join(ks.versions, ","), crd.Name)
			}
			return names, fmt.Errorf("create a CRD for %s: %w", gk, err)
		}
		names = append(names, crd.Name)
	}
	for _, gk := range order {
		ks := missing[gk]
		name := crdName(ks)
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, loadTimeout, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					for _, v := range ks.versions {
						if ok, _ := served(ctx, c, gk.WithVersion(v)); !ok {
							return false, nil
						}
					}
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return names, fmt.Errorf("the generated CRD %s did not become Established and served: %w", name, err)
		}
	}
	return names, nil
}

// served reports whether the API server serves gvk: the client maps it
// and a list of it succeeds (a mapping cached from a CRD since deleted
// does not count).
func served(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) (bool, error) {
	if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, err
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := c.List(ctx, l, client.Limit(1))
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return false, nil
	}
	return false, err
}

func (ks *kindSpec) note(o *unstructured.Unstructured) {
	v := o.GroupVersionKind().Version
	found := false
	for _, have := range ks.versions {
		found = found || have == v
	}
	if !found {
		ks.versions = append(ks.versions, v)
	}
	if o.GetNamespace() != "" {
		ks.namespaced = true
		if ks.nsDoc == "" {
			ks.nsDoc = objectPath(o)
		}
	} else if ks.clusterDoc == "" {
		ks.clusterDoc = o.GetName()
	}
}

// plural derives a resource name from a kind the way CRD authors name
// theirs: lower case, English plural (Policy → policies, Ingress →
// ingresses, Certificate → certificates).
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "":
		return k
	case strings.HasSuffix(k, "s") || strings.HasSuffix(k, "x") || strings.HasSuffix(k, "z") ||
		strings.HasSuffix(k, "ch") || strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

func crdName(ks *kindSpec) string { return plural(ks.gk.Kind) + "." + ks.gk.Group }

// schemalessCRD is a CRD that serves the kind at every recorded version
// (the first stores), keeps whatever fields an object carries, and has a
// status subresource.
func schemalessCRD(ks *kindSpec) *apiextensionsv1.CustomResourceDefinition {
	scope := apiextensionsv1.ClusterScoped
	if ks.namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crdName(ks), Labels: map[string]string{"runlore.io/eval-generated": "true"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: ks.gk.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: ks.gk.Kind, ListKind: ks.gk.Kind + "List",
				Plural: plural(ks.gk.Kind), Singular: strings.ToLower(ks.gk.Kind),
			},
			Scope: scope,
		},
	}
	// Groups under k8s.io and kubernetes.io are protected; say the CRD is
	// not an approved API.
	if strings.HasSuffix(ks.gk.Group, ".k8s.io") || strings.HasSuffix(ks.gk.Group, ".kubernetes.io") {
		crd.Annotations = map[string]string{"api-approved.kubernetes.io": "unapproved, generated by lore eval for a recorded state"}
	}
	for i, v := range ks.versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: &preserve,
			}},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		})
	}
	return crd
}
