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

package outcome

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func vote(user, value string, min int) runlorev1.Vote {
	return runlorev1.Vote{User: user, Value: value, At: metav1.NewTime(at(min))}
}

func TestFactor(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		recalls, resolved, up, down int
		want                        float64
	}{
		{"no history is the prior mean", 0, 0, 0, 0, 0.5},
		{"one unresolved recall drops below the floor", 1, 0, 0, 0, 1.0 / 3},
		{"one resolved recall", 1, 1, 0, 0, 2.0 / 3},
		{"three recalls one resolved", 3, 1, 0, 0, 2.0 / 5},
		{"a thumbs up is one success", 0, 0, 1, 0, 2.0 / 3},
		{"a thumbs down is one failure", 0, 0, 0, 1, 1.0 / 3},
		{"mixed", 4, 3, 1, 1, 5.0 / 8},
		{"more resolves than recalls cannot inflate", 1, 5, 0, 0, 2.0 / 3},
		{"negative counts read as zero", -3, -1, -2, -2, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Factor(tc.recalls, tc.resolved, tc.up, tc.down)).To(BeNumerically("~", tc.want, 1e-12))
		})
	}
}

func TestConfirmationsWeighHalf(t *testing.T) {
	g := NewWithT(t)
	contested := Tally{Down: 1}
	g.Expect(contested.Factor()).To(BeNumerically("~", 1.0/3, 1e-12))
	one := Tally{Down: 1, Confirmations: 1}
	g.Expect(one.Factor()).To(BeNumerically("<", PriorMean), "one confirmation is not enough to recover from one 👎")
	two := Tally{Down: 1, Confirmations: 2}
	g.Expect(two.Factor()).To(BeNumerically("~", PriorMean, 1e-12), "two confirmations bring one 👎 back to the floor")
	// Two confirmations weigh exactly one 👍.
	g.Expect(Tally{Recalls: 3, Resolved: 1, Confirmations: 2}.Factor()).To(Equal(Tally{Recalls: 3, Resolved: 1, Up: 1}.Factor()))
}

func TestTrustWithholding(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tally        Tally
		live         bool
		want         float64
		wantWithheld bool
	}{
		{"never graded on a resolve-less deployment", Tally{Recalls: 4}, false, PriorMean, true},
		{"the same entry once the channel is live decays fully", Tally{Recalls: 4}, true, 1.0 / 6, false},
		{"a thumbs down bites without a resolve channel", Tally{Recalls: 4, Down: 1}, false, 1.0 / 7, false},
		{"a thumbs up is ground truth too", Tally{Recalls: 2, Up: 1}, false, 2.0 / 5, false},
		{"a confirmation is ground truth", Tally{Recalls: 1, Confirmations: 1}, false, 1.5 / 3.5, false},
		{"no history on a live deployment", Tally{}, true, PriorMean, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f, withheld := tc.tally.Trust(tc.live)
			g.Expect(withheld).To(Equal(tc.wantWithheld))
			g.Expect(f).To(BeNumerically("~", tc.want, 1e-12))
		})
	}
}

func TestDerived(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Derived("gitops:apps/web/ReconciliationFailed")).To(BeTrue())
	g.Expect(Derived("reinvestigate:inc-1:3")).To(BeTrue())
	g.Expect(Derived("3f2a9c1e")).To(BeFalse())
	g.Expect(Derived("gitopsish")).To(BeFalse())
}

func openEv(fp string, min int, entry string) Event {
	kind := runlorev1.OutcomeFresh
	if entry != "" {
		kind = runlorev1.OutcomeRecall
	}
	return Event{Type: Opened, At: at(min), Record: Record{
		Name: fmt.Sprintf("%s-%d", fp, min), Fingerprint: fp, TriggerKey: "key-" + fp, Kind: kind, Entry: entry,
	}}
}

func resolveEv(fp string, min int) Event {
	return Event{Type: ResolvedEvent, Fingerprint: fp, At: at(min)}
}

func TestEpisodes(t *testing.T) {
	type ep struct {
		name     string
		resolved bool
	}
	for _, tc := range []struct {
		name   string
		events []Event
		want   []ep
	}{
		{"open then resolve", []Event{openEv("a", 0, "e"), resolveEv("a", 5)}, []ep{{"a-0", true}}},
		{"three opens one resolve: three episodes, newest resolved", []Event{
			openEv("a", 0, "e"), openEv("a", 10, "e"), openEv("a", 20, "e"), resolveEv("a", 25),
		}, []ep{{"a-0", false}, {"a-10", false}, {"a-20", true}}},
		{"a resolve that arrives first closes the next open", []Event{
			resolveEv("a", 0), openEv("a", 3, "e"), openEv("a", 10, "e"),
		}, []ep{{"a-3", true}, {"a-10", false}}},
		{"resolves pair per fingerprint", []Event{
			openEv("a", 0, "e"), openEv("b", 1, "e"), resolveEv("b", 2),
		}, []ep{{"a-0", false}, {"b-1", true}}},
		{"two resolves close two opens, newest first", []Event{
			openEv("a", 0, "e"), openEv("a", 1, "e"), resolveEv("a", 2), resolveEv("a", 3),
		}, []ep{{"a-0", true}, {"a-1", true}}},
		{"a resolve with nothing to close is not an episode", []Event{resolveEv("z", 0)}, []ep{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Episodes(tc.events)
			g.Expect(got).To(HaveLen(len(tc.want)))
			for i, w := range tc.want {
				g.Expect(got[i].Name).To(Equal(w.name))
				g.Expect(got[i].Resolved).To(Equal(w.resolved), w.name)
			}
		})
	}
}

func TestEpisodesResolvedAt(t *testing.T) {
	g := NewWithT(t)
	got := Episodes([]Event{resolveEv("a", 1), openEv("a", 2, "e"), openEv("b", 3, ""), resolveEv("b", 9)})
	g.Expect(got[0].ResolvedAt).To(Equal(at(1)))
	g.Expect(got[1].ResolvedAt).To(Equal(at(9)))
}

func TestCloseTarget(t *testing.T) {
	g := NewWithT(t)
	records := []Record{
		{Name: "old", Fingerprint: "a", OpenedAt: at(0)},
		{Name: "newest", Fingerprint: "a", OpenedAt: at(20)},
		{Name: "mid", Fingerprint: "a", OpenedAt: at(10)},
		{Name: "closed", Fingerprint: "a", OpenedAt: at(30), Resolved: true},
		{Name: "other", Fingerprint: "b", OpenedAt: at(40)},
	}
	i, ok := CloseTarget(records, "a")
	g.Expect(ok).To(BeTrue())
	g.Expect(records[i].Name).To(Equal("newest"))
	_, ok = CloseTarget(records, "c")
	g.Expect(ok).To(BeFalse())
}

func TestRollup(t *testing.T) {
	g := NewWithT(t)
	records := Episodes([]Event{
		openEv("a", 0, "oom"), resolveEv("a", 5),
		openEv("a", 10, "oom"),
		openEv("b", 20, "oom"), resolveEv("b", 30),
		// Derived fingerprints are recurrence-only: no recall, no resolve.
		openEv("gitops:apps/web", 40, "oom"), resolveEv("gitops:apps/web", 45),
		openEv("c", 50, ""), // fresh: no entry
	})
	got := Rollup(records, nil)
	g.Expect(got).To(HaveLen(1))
	oom := got["oom"]
	g.Expect(oom.Recalls).To(Equal(3))
	g.Expect(oom.Resolved).To(Equal(2))
	g.Expect(oom.LastRecalledAt).To(Equal(at(20)))
	g.Expect(oom.LastResolvedAt).To(Equal(at(30)))
	g.Expect(oom.Factor()).To(BeNumerically("~", 3.0/5, 1e-12))
}

func TestRollupVotes(t *testing.T) {
	g := NewWithT(t)
	records := []Record{
		{Name: "r1", Fingerprint: "a", TriggerKey: "k", Kind: runlorev1.OutcomeRecall, Entry: "oom", OpenedAt: at(0),
			Votes: []runlorev1.Vote{vote("alice", VoteDown, 1), vote("bob", VoteUp, 2)}},
		// alice votes again on a later occurrence of the same trigger: her
		// newest vote is her one live vote.
		{Name: "r2", Fingerprint: "a", TriggerKey: "k", Kind: runlorev1.OutcomeRecall, Entry: "oom", OpenedAt: at(10),
			Votes: []runlorev1.Vote{vote("alice", VoteUp, 11)}},
		// Votes on a derived fingerprint are ground truth and count.
		{Name: "r3", Fingerprint: "gitops:x", TriggerKey: "g", Kind: runlorev1.OutcomeRecall, Entry: "flux", OpenedAt: at(20),
			Votes: []runlorev1.Vote{vote("carol", VoteDown, 21)}},
		// A vote on a fresh answer weighs nothing.
		{Name: "r4", Fingerprint: "z", TriggerKey: "f", Kind: runlorev1.OutcomeFresh, OpenedAt: at(30),
			Votes: []runlorev1.Vote{vote("dave", VoteDown, 31)}},
	}
	got := Rollup(records, nil)
	g.Expect(got["oom"].Up).To(Equal(2))
	g.Expect(got["oom"].Down).To(Equal(0))
	g.Expect(got["flux"].Recalls).To(Equal(0))
	g.Expect(got["flux"].Down).To(Equal(1))
	f, withheld := got["flux"].Trust(false)
	g.Expect(withheld).To(BeFalse())
	g.Expect(f).To(BeNumerically("~", 1.0/3, 1e-12))
	g.Expect(got).NotTo(HaveKey(""))
}

func TestRollupConfirmations(t *testing.T) {
	g := NewWithT(t)
	records := []Record{
		{Name: "recall", Fingerprint: "a", TriggerKey: "k", Kind: runlorev1.OutcomeRecall, Entry: "oom", OpenedAt: at(0),
			Votes: []runlorev1.Vote{vote("alice", VoteDown, 5)}},
		// Before the 👎: agreement then is not recovery evidence.
		{Name: "early", Fingerprint: "x", Kind: runlorev1.OutcomeFresh, DupFingerprint: "fp-oom", OpenedAt: at(3)},
		{Name: "fresh1", Fingerprint: "a", Kind: runlorev1.OutcomeFresh, DupFingerprint: "fp-oom", OpenedAt: at(10)},
		{Name: "fresh2", Fingerprint: "a", Kind: runlorev1.OutcomeFresh, DupFingerprint: "fp-oom", OpenedAt: at(20)},
		{Name: "elsewhere", Fingerprint: "b", Kind: runlorev1.OutcomeFresh, DupFingerprint: "fp-other", OpenedAt: at(30)},
	}
	got := Rollup(records, map[string]string{"oom": "fp-oom", "other": "fp-other"})
	g.Expect(got["oom"].Confirmations).To(Equal(2))
	g.Expect(got).NotTo(HaveKey("other"), "no 👎 stands on it, so agreement is not counted")
	// One recall unresolved, one 👎, two confirmations: (0+0+1+1)/(1+0+1+1+2).
	g.Expect(got["oom"].Factor()).To(BeNumerically("~", 2.0/5, 1e-12))
}

func TestCastVote(t *testing.T) {
	g := NewWithT(t)
	votes, changed, err := CastVote(nil, vote("alice", VoteUp, 0))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(votes).To(HaveLen(1))

	again, changed, err := CastVote(votes, vote("alice", VoteUp, 5))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse(), "a repeat is idempotent")
	g.Expect(again[0].At.Time).To(Equal(at(0)))

	moved, changed, _ := CastVote(again, vote("alice", VoteDown, 6))
	g.Expect(changed).To(BeTrue())
	g.Expect(moved).To(HaveLen(1))
	g.Expect(moved[0].Value).To(Equal(VoteDown))
	g.Expect(again[0].Value).To(Equal(VoteUp), "the input is not modified")

	anon, _, _ := CastVote(moved, runlorev1.Vote{Value: VoteUp})
	g.Expect(anon).To(HaveLen(2))
	g.Expect(anon[1].User).To(Equal(UnknownUser))
	g.Expect(VotesSummary(anon)).To(Equal("+1/-1"))

	_, _, err = CastVote(nil, runlorev1.Vote{User: "x", Value: "sideways"})
	g.Expect(err).To(MatchError(ContainSubstring(`"sideways"`)))
}

func TestOccurrences(t *testing.T) {
	g := NewWithT(t)
	records := []Record{
		{Name: "1", TriggerKey: "oom/payments/api", Fingerprint: "a", OpenedAt: at(0), Entry: "oom", Kind: runlorev1.OutcomeRecall},
		{Name: "3", TriggerKey: "oom/payments/api", Fingerprint: "a", OpenedAt: at(20), Kind: runlorev1.OutcomeFresh},
		{Name: "2", TriggerKey: "oom/payments/api", Fingerprint: "a", OpenedAt: at(10), Entry: "oom", Kind: runlorev1.OutcomeRecall},
		{Name: "g", TriggerKey: "gitops/apps/web", Fingerprint: "gitops:apps/web", OpenedAt: at(5),
			Votes: []runlorev1.Vote{vote("bob", VoteDown, 6)}},
		{Name: "keyless", Fingerprint: "q", OpenedAt: at(1)},
	}
	occ := Occurrences(records)
	g.Expect(occ).To(HaveLen(2))
	api := occ["oom/payments/api"]
	g.Expect(api.Count).To(Equal(3))
	g.Expect(api.FirstSeen).To(Equal(at(0)))
	g.Expect(api.LastSeen).To(Equal(at(20)))
	g.Expect(api.Previous.Name).To(Equal("3"))
	g.Expect(api.StandingDown).To(BeFalse())
	g.Expect(occ["gitops/apps/web"].StandingDown).To(BeTrue())
}

func TestSkipForCooldown(t *testing.T) {
	answered := Occurrence{Count: 2, LastSeen: at(0)}
	for _, tc := range []struct {
		name     string
		o        Occurrence
		now      time.Time
		cooldown time.Duration
		skip     bool
	}{
		{"off by default", answered, at(1), 0, false},
		{"within the cooldown", answered, at(5), 10 * time.Minute, true},
		{"past the cooldown", answered, at(15), 10 * time.Minute, false},
		{"a standing thumbs down re-arms", Occurrence{Count: 2, LastSeen: at(0), StandingDown: true}, at(5), 10 * time.Minute, false},
		{"never answered", Occurrence{}, at(5), 10 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			skip, reason := SkipForCooldown(tc.o, tc.now, tc.cooldown)
			g.Expect(skip).To(Equal(tc.skip))
			g.Expect(reason).NotTo(BeEmpty())
		})
	}
}

func TestExpireThenFoldKeepsTotals(t *testing.T) {
	g := NewWithT(t)
	var events []Event
	for i := 0; i < 40; i++ {
		events = append(events, openEv("a", i*10, "oom"))
		if i%3 == 0 {
			events = append(events, resolveEv("a", i*10+1))
		}
	}
	records := Episodes(events)
	whole := Rollup(records, nil)["oom"]
	keep, fold := Expire(records, 15)
	g.Expect(keep).To(HaveLen(15))
	g.Expect(fold).To(HaveLen(25))
	for _, r := range keep {
		g.Expect(r.OpenedAt).To(BeTemporally(">=", at(250)), "the newest records are kept")
	}
	folded := Rollup(fold, nil)["oom"]
	g.Expect(folded.Add(Rollup(keep, nil)["oom"])).To(Equal(whole))

	same, none := Expire(records, 100)
	g.Expect(same).To(HaveLen(40))
	g.Expect(none).To(BeEmpty())
}

func TestResolveChannelLive(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ResolveChannelLive([]Record{{Name: "a"}, {Name: "b"}})).To(BeFalse())
	g.Expect(ResolveChannelLive([]Record{{Name: "a"}, {Name: "b", Resolved: true}})).To(BeTrue())
}

func TestTrustRecordRoundTrip(t *testing.T) {
	g := NewWithT(t)
	tally := Tally{Recalls: 3, Resolved: 2, Up: 1, Down: 1, Confirmations: 2, LastRecalledAt: at(5), LastResolvedAt: at(9)}
	tr := tally.TrustRecord()
	g.Expect(tr.Factor).To(Equal(runlorev1.Confidence("0.625")), "(2+1+1+1)/(3+1+1+1+2)")
	g.Expect(TallyFromTrustRecord(tr)).To(Equal(tally))
}

func TestFromOutcomeRecord(t *testing.T) {
	g := NewWithT(t)
	resolvedAt := metav1.NewTime(at(7))
	o := &runlorev1.OutcomeRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "rec-1"},
		Spec: runlorev1.OutcomeRecordSpec{
			IncidentRef: runlorev1.LocalObjectReference{Name: "inc"}, InvestigationRef: runlorev1.LocalObjectReference{Name: "inv"},
			EntryRef: &runlorev1.LocalObjectReference{Name: "oom"}, Kind: runlorev1.OutcomeRecall,
			IncidentFingerprint: "abc", Fingerprint: "dup", TriggerKey: "k", OpenedAt: metav1.NewTime(at(1)),
		},
		Status: runlorev1.OutcomeRecordStatus{Resolved: true, ResolvedAt: &resolvedAt, Votes: []runlorev1.Vote{vote("a", VoteUp, 2)}},
	}
	r := FromOutcomeRecord(o)
	g.Expect(r).To(Equal(Record{Name: "rec-1", Fingerprint: "abc", TriggerKey: "k", Kind: runlorev1.OutcomeRecall, Entry: "oom",
		DupFingerprint: "dup", Investigation: "inv", OpenedAt: at(1), Resolved: true, ResolvedAt: at(7), Votes: o.Status.Votes}))
}

func TestConfidenceFormatting(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[float64]runlorev1.Confidence{
		0.5: "0.5", 2.0 / 3: "0.667", 1: "1", 0: "0", -1: "0", 7: "1", 0.9: "0.9", 0.1234: "0.123",
	} {
		g.Expect(FormatConfidence(in)).To(Equal(want), fmt.Sprint(in))
	}
	f, ok, err := ParseConfidence("spec.minScore", "0.35")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	g.Expect(f).To(Equal(0.35))
	_, ok, err = ParseConfidence("spec.minScore", "")
	g.Expect(ok).To(BeFalse())
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = ParseConfidence("spec.minScore", "1.5")
	g.Expect(err).To(MatchError(ContainSubstring("spec.minScore")))
}

// BenchmarkRollup folds a realistic ledger: 10k episodes over 500 entries
// and 2k trigger keys, with votes and confirmations.
func BenchmarkRollup(b *testing.B) {
	records := make([]Record, 10000)
	fps := map[string]string{}
	for i := range records {
		entry := fmt.Sprintf("entry-%d", i%500)
		fps[entry] = "fp-" + entry
		r := Record{
			Name: fmt.Sprint(i), Fingerprint: fmt.Sprintf("fp%d", i%3000), TriggerKey: fmt.Sprintf("key-%d", i%2000),
			Kind: runlorev1.OutcomeRecall, Entry: entry, OpenedAt: at(i), Resolved: i%3 != 0, ResolvedAt: at(i + 1),
		}
		if i%7 == 0 {
			r.Kind, r.Entry, r.DupFingerprint = runlorev1.OutcomeFresh, "", "fp-"+entry
		}
		if i%11 == 0 {
			r.Votes = []runlorev1.Vote{vote(fmt.Sprintf("u%d", i%13), VoteDown, i)}
		}
		records[i] = r
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = Rollup(records, fps)
		_ = Occurrences(records)
	}
}

// BenchmarkEpisodes replays a 10k-event ledger: opens over 3k fingerprints
// with a resolve after most of them, some arriving first.
func BenchmarkEpisodes(b *testing.B) {
	var events []Event
	for i := range 10000 {
		fp := fmt.Sprintf("fp%d", i%3000)
		if i%17 == 0 {
			events = append(events, resolveEv(fp, i))
		}
		events = append(events, openEv(fp, i, "e"))
		if i%3 != 0 {
			events = append(events, resolveEv(fp, i+1))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = Episodes(events)
	}
}
