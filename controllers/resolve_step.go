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

package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/chat"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// DeliveryAnnotation on an OutcomeRecord records the delivery of its
// finding: "pending" while it is being sent (a restart then leaves it so,
// and nothing is re-sent), then "delivered ..." or "failed ...".
const DeliveryAnnotation = "runlore.io/delivery"

// DefaultNotifyTimeout bounds one finding's delivery across every channel
// and retry.
const DefaultNotifyTimeout = 2 * time.Minute

// OpenOutcome is the Resolve step: it opens the OutcomeRecord that the
// Incident's resolved signal later closes, then delivers the finding: a
// one-line Event on the Incident and the Investigation, and the Notifier
// when one is configured. The record is named after the Investigation, so
// a step re-run after a restart finds it instead of opening a second
// episode, and the delivery claim on it keeps a re-run from sending twice.
type OpenOutcome struct {
	Client client.Client
	// Reader reads the record uncached for the delivery claim; Client when
	// nil.
	Reader client.Reader
	// Recorder emits the summary Events; none when nil.
	Recorder events.EventRecorder
	// Notifier delivers the finding outside the cluster; optional. A failed
	// delivery is recorded on the record, never fatal to the step.
	Notifier notify.Notifier
	// NotifyTimeout bounds the delivery; DefaultNotifyTimeout when zero.
	NotifyTimeout time.Duration
	// Synchronous sends within the step instead of beside it (tests that
	// assert a single run's effect).
	Synchronous bool
	// OperatorNamespace holds ActionPolicies that apply everywhere: the
	// one in force decides whether the finding proposes fixes, so the
	// delivered finding already carries them.
	OperatorNamespace string
}

// entryHashLen is how many hex digits of the name's SHA-256 a shortened
// EntryLabel value ends with.
const entryHashLen = 12

// EntryLabelValue is the EntryLabel value that links an OutcomeRecord to
// the KnowledgeEntry named name. A name that is a valid label value is the
// value itself; a longer one (a catalog mirror's name runs past a label
// value's 63 bytes) is its first characters and a hash of the whole name,
// so every name has one stable value that always fits. The full name is
// the record's spec.entryRef: a reader selects by this value and keeps the
// records whose entryRef names the entry, so two names that shorten alike
// never mix.
func EntryLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	prefix := name
	if room := validation.LabelValueMaxLength - entryHashLen - 1; len(prefix) > room {
		prefix = prefix[:room]
	}
	// A label value begins and ends with an alphanumeric character, and
	// holds only those and '-', '_', '.'.
	prefix = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, prefix)
	prefix = strings.TrimLeft(strings.TrimRight(prefix, "-_."), "-_.")
	h := hex.EncodeToString(sum[:])[:entryHashLen]
	if prefix == "" {
		return h
	}
	return prefix + "-" + h
}

// +kubebuilder:rbac:groups=runlore.io,resources=outcomerecords,verbs=get;list;watch;create;update;patch;delete

// Run opens the episode.
func (s OpenOutcome) Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	rec := &runlorev1.OutcomeRecord{
		ObjectMeta: metav1.ObjectMeta{
			Name:      inv.Name,
			Namespace: inv.Namespace,
			Labels:    map[string]string{runlorev1.IncidentLabel: inc.Name},
		},
		Spec: runlorev1.OutcomeRecordSpec{
			IncidentRef:         runlorev1.LocalObjectReference{Name: inc.Name},
			InvestigationRef:    runlorev1.LocalObjectReference{Name: inv.Name},
			Kind:                runlorev1.OutcomeFresh,
			TriggerKey:          inc.Spec.TriggerKey,
			IncidentFingerprint: inc.Spec.Fingerprint,
			OpenedAt:            metav1.Now(),
			AlertName:           inc.Spec.AlertName,
			Workload:            inc.Spec.Workload.DeepCopy(),
			Investigator:        inv.Status.Usage.Investigator,
			ModelVersion:        inv.Status.Usage.ModelVersion,
			PromptVersion:       inv.Status.Usage.PromptVersion,
		},
	}
	rec.Spec.Verdict, rec.Spec.Cause, rec.Spec.CauseEntities = outcome.CauseSnapshot(inv.Status.Result)
	if key := outcome.SubjectKey(inc.Spec.AlertName, inc.Spec.Workload); key != "" {
		rec.Labels[runlorev1.SubjectLabel] = key
	}
	if inv.Status.Mode == runlorev1.ModeRecall && inv.Status.Recall != nil && inv.Status.Recall.Entry != "" {
		rec.Spec.Kind = runlorev1.OutcomeRecall
		rec.Spec.EntryRef = &runlorev1.LocalObjectReference{Name: inv.Status.Recall.Entry}
		rec.Spec.EntryNamespace = inv.Status.Recall.EntryNamespace
		rec.Labels[runlorev1.EntryLabel] = EntryLabelValue(inv.Status.Recall.Entry)
	}
	if inv.Status.Curation != nil {
		rec.Spec.Fingerprint = inv.Status.Curation.Fingerprint
	}
	// No owner reference: the ledger outlives its Incident, and the
	// retention bound folds old records into their entry instead.
	if err := s.Client.Create(ctx, rec); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	inv.Status.OutcomeRecord = rec.Name
	policy, err := selectPolicy(ctx, s.Client, inv.Namespace, s.OperatorNamespace, inc.Spec.Environment)
	if err != nil {
		return err
	}
	if action.ProposesFixes(policy) && inv.Status.Result != nil {
		action.AddFixes(inv.Status.Result)
	}
	return s.deliver(ctx, inc, inv, client.ObjectKeyFromObject(rec))
}

// deliver sends the finding once per OutcomeRecord. It returns an error
// only when the claim cannot be written (the step is retried); a failed
// delivery is recorded on the record and in an Event.
func (s OpenOutcome) deliver(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation, key client.ObjectKey) error {
	logger := log.FromContext(ctx).WithValues("outcomeRecord", key.Name)
	rec, claimed, err := s.claimDelivery(ctx, key)
	if err != nil || !claimed {
		return err
	}
	msg, err := notify.NewMessage(notify.Input{Incident: inc, Investigation: inv, Members: chat.StormMembers(ctx, s.Client, inc),
		Entry: s.recalledEntry(ctx, inv), Recurrence: s.recurrence(ctx, inc, rec.Name), Memory: s.memory(ctx, inc, inv)})
	if err != nil {
		s.recordDelivery(ctx, rec, "failed: "+err.Error(), nil)
		return nil
	}
	summary := textutil.Runes(msg.Summary(), 240)
	if s.Recorder != nil {
		s.Recorder.Eventf(inc, inv, corev1.EventTypeNormal, "FindingDelivered", "Resolve", "%s", summary)
		s.Recorder.Eventf(inv, inc, corev1.EventTypeNormal, "FindingDelivered", "Resolve", "%s", summary)
	}
	if s.Notifier == nil {
		s.recordDelivery(ctx, rec, "delivered: events", nil)
		return nil
	}
	timeout := s.NotifyTimeout
	if timeout <= 0 {
		timeout = DefaultNotifyTimeout
	}
	// The channels retry with backoff for up to the timeout: the send runs
	// beside the step, which never waits on a chat service.
	send := func() {
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		var refs []notify.Ref
		var err error
		if p, ok := s.Notifier.(notify.Poster); ok {
			refs, err = p.Post(sendCtx, msg)
		} else {
			err = s.Notifier.Notify(sendCtx, msg)
		}
		var extra map[string]string
		if len(refs) > 0 {
			extra = map[string]string{notify.MessagesAnnotation: notify.EncodeRefs(refs), notify.CardAnnotation: notify.CardHash(msg)}
		}
		if err != nil {
			reason := textutil.Runes(redact.String(err.Error()), 400)
			logger.Info("finding delivery failed; not retried", "channels", s.Notifier.Name(), "error", reason)
			if s.Recorder != nil {
				s.Recorder.Eventf(inv, inc, corev1.EventTypeWarning, "NotifyFailed", "Resolve", "delivery to %s failed: %s", s.Notifier.Name(), reason)
			}
			s.recordDelivery(sendCtx, rec, "failed: "+reason, extra)
			return
		}
		s.recordDelivery(sendCtx, rec, "delivered: events, "+s.Notifier.Name(), extra)
	}
	if s.Synchronous {
		send()
		return nil
	}
	inc, inv = inc.DeepCopy(), inv.DeepCopy()
	go send()
	return nil
}

// claimDelivery marks the record "pending" with an optimistic lock; it
// reports false when the record already carries a delivery (sent, failed,
// or interrupted by a restart), so nothing is sent twice.
func (s OpenOutcome) claimDelivery(ctx context.Context, key client.ObjectKey) (*runlorev1.OutcomeRecord, bool, error) {
	reader := s.Reader
	if reader == nil {
		reader = s.Client
	}
	var last error
	for range 5 {
		rec := &runlorev1.OutcomeRecord{}
		if err := reader.Get(ctx, key, rec); err != nil {
			return nil, false, err
		}
		if _, done := rec.Annotations[DeliveryAnnotation]; done {
			return rec, false, nil
		}
		patch := client.MergeFromWithOptions(rec.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if rec.Annotations == nil {
			rec.Annotations = map[string]string{}
		}
		rec.Annotations[DeliveryAnnotation] = "pending"
		last = s.Client.Patch(ctx, rec, patch)
		if last == nil {
			return rec, true, nil
		}
		if !apierrors.IsConflict(last) {
			return nil, false, last
		}
	}
	return nil, false, fmt.Errorf("claiming the delivery of %s: %w", key.Name, last)
}

// recordDelivery writes the delivery's outcome; failing to write it is only
// logged, since the claim already keeps a re-run from sending again.
func (s OpenOutcome) recordDelivery(ctx context.Context, rec *runlorev1.OutcomeRecord, outcome string, extra map[string]string) {
	patch := client.MergeFrom(rec.DeepCopy())
	for k, v := range extra {
		rec.Annotations[k] = v
	}
	rec.Annotations[DeliveryAnnotation] = textutil.Runes(outcome+" at "+time.Now().UTC().Format(time.RFC3339), 512)
	if err := s.Client.Patch(ctx, rec, patch); err != nil {
		log.FromContext(ctx).Error(err, "recording the finding's delivery", "outcomeRecord", rec.Name)
	}
}

// recalledEntry is the KnowledgeEntry a recall answered from, preferring
// the Investigation's namespace; nil when there is none or it is gone.
func (s OpenOutcome) recalledEntry(ctx context.Context, inv *runlorev1.Investigation) *runlorev1.KnowledgeEntry {
	if inv.Status.Mode != runlorev1.ModeRecall || inv.Status.Recall == nil || inv.Status.Recall.Entry == "" {
		return nil
	}
	var list runlorev1.KnowledgeEntryList
	if err := s.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing knowledge entries for the recalled entry's trust record")
		return nil
	}
	var found *runlorev1.KnowledgeEntry
	for i := range list.Items {
		e := &list.Items[i]
		if e.Name != inv.Status.Recall.Entry {
			continue
		}
		if found == nil || e.Namespace == inv.Namespace {
			found = e
		}
	}
	return found
}

// recurrence counts the episodes opened for the Incident's trigger key in
// its namespace, this one included (in all and this week), quotes the
// previous one's answer, and counts the Incident's firings.
func (s OpenOutcome) recurrence(ctx context.Context, inc *runlorev1.Incident, self string) notify.Recurrence {
	return chat.Recurrence(ctx, s.Client, inc.Namespace, inc.Spec.TriggerKey, self, time.Now(), inc.Status.Occurrences)
}
