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

package admission

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
)

// Path is where the webhook is served.
const Path = "/mutate-runlore-io-v1alpha1-verbs"

// +kubebuilder:webhook:path=/mutate-runlore-io-v1alpha1-verbs,mutating=true,failurePolicy=fail,sideEffects=None,groups=runlore.io,resources=investigations;incidents;actionpolicies,verbs=create;update,versions=v1alpha1,name=verbs.runlore.io,admissionReviewVersions=v1

// Handler admits RunLore objects, stamping human verbs.
type Handler struct {
	Approvers ApproverCheck
	// Signer proves the stamps of decisions and votes; without it the
	// webhook refuses them.
	Signer *Signer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Self is the operator's own user name; its requests may carry stamps
	// it made for chat users (see Request.Trusted). Empty trusts nobody.
	Self string
}

var _ admission.Handler = (*Handler)(nil)

// Handle implements admission.Handler.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &obj.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	r := Request{
		Kind: req.Kind.Kind, Namespace: req.Namespace, New: obj.GetAnnotations(),
		User:   User{Name: req.UserInfo.Username, Groups: req.UserInfo.Groups},
		Signer: h.Signer, Now: now(),
		Trusted: h.Self != "" && req.UserInfo.Username == h.Self,
	}
	if len(req.OldObject.Raw) > 0 {
		prev := &unstructured.Unstructured{}
		if err := json.Unmarshal(req.OldObject.Raw, &prev.Object); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		// The stamp binds the object as it stood: its UID, and the
		// generation the decision was made at (the API server moves the
		// generation only after admission).
		r.Old, r.UID, r.Generation = prev.GetAnnotations(), string(prev.GetUID()), prev.GetGeneration()
	}
	if r.Kind == "ActionPolicy" {
		var a runlorev1.Approvers
		if raw, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "approvers"); ok {
			b, _ := json.Marshal(raw)
			_ = json.Unmarshal(b, &a)
		}
		r.PolicyApprovers = &a
	}
	ann, reason := Mutate(ctx, r, h.Approvers)
	if reason != "" {
		return admission.Denied(reason)
	}
	if equalMaps(ann, r.New) {
		return admission.Allowed("")
	}
	obj.SetAnnotations(ann)
	patched, err := json.Marshal(obj.Object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, patched)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// PolicyApprovers checks approvers against the ActionPolicy in force for
// the namespace, chosen among the policies there and in the operator's
// namespace as the action gate chooses it.
func PolicyApprovers(c client.Reader, operatorNamespace string) ApproverCheck {
	return func(ctx context.Context, namespace string, u User) (bool, string, error) {
		namespaces := []string{namespace}
		if operatorNamespace != "" && operatorNamespace != namespace {
			namespaces = append(namespaces, operatorNamespace)
		}
		var all []runlorev1.ActionPolicy
		for _, ns := range namespaces {
			var list runlorev1.ActionPolicyList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			all = append(all, list.Items...)
		}
		p := action.SelectPolicy(all, namespace, "")
		if p == nil || p.Spec.Mode == runlorev1.ActionModeOff || p.Spec.Mode == "" {
			return false, "", nil
		}
		return action.IsApprover(p.Spec.Approvers, action.Identity{User: u.Name, Groups: u.Groups}), p.Name, nil
	}
}
