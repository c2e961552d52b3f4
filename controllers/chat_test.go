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
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/chat"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/test/testenv"
)

// slackRoom is the channel of Slack's recorded block_actions payload.
const slackRoom = "CBR2V3XEX"

var slackSecret = []byte("8f742231b10e8888abcd99yyyzzz85a5")

// slackAPI speaks the Web API methods a finding card uses, with Slack's
// recorded answers.
type slackAPI struct {
	mu    sync.Mutex
	calls []map[string]any
	down  bool
}

func newSlackAPI(t *testing.T) (*slackAPI, *httptest.Server) {
	s := &slackAPI{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		if body == nil {
			body = map[string]any{}
		}
		body["_method"] = method
		s.mu.Lock()
		s.calls = append(s.calls, body)
		down := s.down
		s.mu.Unlock()
		if down {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		}
		answer, err := os.ReadFile(filepath.Join(testenv.Root(), "pkg", "notify", "testdata", method+".json"))
		if err != nil {
			answer = []byte(`{"ok":false,"error":"unknown_method"}`)
		}
		_, _ = w.Write(answer)
	}))
	t.Cleanup(ts.Close)
	return s, ts
}

func (s *slackAPI) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		out = append(out, c["_method"].(string))
	}
	return out
}

func (s *slackAPI) lastUpdate() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.calls) - 1; i >= 0; i-- {
		if s.calls[i]["_method"] == "chat.update" {
			raw, _ := json.Marshal(s.calls[i]["blocks"])
			return string(raw)
		}
	}
	return ""
}

// selfName is the tests' operator user, as the API server names it.
func selfName(t *testing.T) string {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.UserInfo.Username
}

// startWithChat runs the reconcilers, the admission webhook trusting the
// operator's own stamps, and the card updater.
func startWithChat(t *testing.T, ns string, wo *envtest.WebhookInstallOptions, opts Options, app *notify.SlackApp) {
	t.Helper()
	self := selfName(t)
	server := webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir})
	runManager(t, ns, opts, server, func(mgr ctrl.Manager) {
		mgr.GetWebhookServer().Register(admission.Path, &webhook.Admission{Handler: &admission.Handler{
			Approvers: admission.PolicyApprovers(mgr.GetAPIReader(), ns), Signer: opts.Stamps, Self: self}})
		if app != nil {
			NewWithT(t).Expect((&chat.CardUpdater{Client: mgr.GetClient(), Updater: app}).SetupWithManager(mgr)).To(Succeed())
		}
	})
}

// clicker posts signed interactivity requests to the handler as Slack does.
type clicker struct {
	t       *testing.T
	url     string
	mu      sync.Mutex
	replies []string
}

func newClicker(t *testing.T, ns string) (*clicker, *chat.SlackInteractions) {
	routes, err := notify.ParseRoutes("--slack-channels", ns+"="+slackRoom)
	if err != nil {
		t.Fatal(err)
	}
	c := &clicker{t: t}
	h := &chat.SlackInteractions{Secret: func() ([]byte, error) { return slackSecret, nil }, Routes: routes,
		Verbs: &chat.Kube{Client: k8sClient, Reader: k8sClient, Signer: testStamps, OperatorNamespace: ns},
		Reply: func(_ context.Context, _ string, body any) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.replies = append(c.replies, body.(map[string]any)["text"].(string))
			return nil
		}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c.url = srv.URL + chat.InteractionsPath
	return c, h
}

// click sends Slack's recorded block_actions payload as user, with the
// button's action id and value, signed with secret.
func (c *clicker) click(user, actionID, value string, secret []byte) int {
	return c.send(user, actionID, value, false, secret)
}

// choose sends the payload of a choice made in a follow-up select.
func (c *clicker) choose(user, actionID, value string) int {
	return c.send(user, actionID, value, true, slackSecret)
}

func (c *clicker) send(user, actionID, value string, selected bool, secret []byte) int {
	raw, err := os.ReadFile(filepath.Join(testenv.Root(), "pkg", "chat", "testdata", "block_actions.json"))
	if err != nil {
		c.t.Fatal(err)
	}
	var p map[string]any
	_ = json.Unmarshal(raw, &p)
	p["user"].(map[string]any)["id"] = user
	a := p["actions"].([]any)[0].(map[string]any)
	a["action_id"], a["value"] = actionID, value
	if selected {
		delete(a, "value")
		a["type"] = "static_select"
		a["selected_option"] = map[string]any{"text": map[string]any{"type": "plain_text", "text": "choice"}, "value": value}
	}
	payload, _ := json.Marshal(p)
	body := url.Values{"payload": {string(payload)}}.Encode()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(chat.TimestampHeader, ts)
	req.Header.Set(chat.SignatureHeader, chat.SignatureFor(secret, ts, []byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (c *clicker) said() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.replies...)
}

// TestSlackVoteMovesTrust: a finding is posted to the namespace's channel
// as a card; a signed 👍 from a Slack user lands in the Investigation's
// proven vote record through the admission webhook, is counted on the
// OutcomeRecord under slack:<user id>, moves the entry's trust and is shown
// on the card, rewritten in place. A click with a bad signature gets 401 and
// changes nothing; changing your mind moves your vote.
func TestSlackVoteMovesTrust(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	wo := withWebhook(t, ns)
	api, ts := newSlackAPI(t)
	routes, _ := notify.ParseRoutes("--slack-channels", ns+"="+slackRoom)
	app := &notify.SlackApp{Token: "xoxb-test", APIURL: ts.URL + "/api/", Channels: routes}
	startWithChat(t, ns, wo, Options{Steps: testSteps(&stepLog{}, true, nil), Stamps: testStamps, Notifier: app}, app)
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "payments-api-oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Path: "payments/api-oom.md", Type: "Incident", Resource: ns + "/api"}}
	g.Eventually(func() error { return k8sClient.Create(ctx, entry) }, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

	record := func(g Gomega) *runlorev1.OutcomeRecord {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
		return rec
	}
	trust := func(g Gomega) runlorev1.TrustRecord {
		ke := &runlorev1.KnowledgeEntry{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(entry), ke)).To(Succeed())
		return ke.Status.Trust
	}
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Annotations[DeliveryAnnotation]).To(HavePrefix("delivered: events, slack-app"))
		refs, err := notify.DecodeRefs(rec.Annotations[notify.MessagesAnnotation])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(refs).To(Equal([]notify.Ref{{Kind: "slack", Room: "C123ABC456", ID: "1503435956.000247"}}))
		g.Expect(trust(g).Recalls).To(Equal(int32(1)))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(api.methods()[0]).To(Equal("chat.postMessage"))

	clicks, _ := newClicker(t, ns)
	value := notify.InvestigationValue(ns, "inc-1")
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionFeedbackUp, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Status.Votes).To(HaveLen(1))
		g.Expect(rec.Status.Votes[0].User).To(Equal("slack:UA8RXUSPL"))
		g.Expect(rec.Status.Votes[0].Value).To(Equal("up"))
		g.Expect(trust(g).Up).To(Equal(int32(1)))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	inv := getInvestigation(g, ns, "inc-1")
	votes, err := testStamps.VerifiedVotes(string(inv.UID), inv.Annotations)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(votes).To(Equal(map[string]string{"slack:UA8RXUSPL": "up"}), "the vote is where a kubectl vote lands")
	g.Eventually(api.lastUpdate, eventually, 200*time.Millisecond).Should(ContainSubstring("votes +1/-0"), "the card shows it, updated in place")

	// A bad signature and a stale one: 401, nothing recorded.
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionFeedbackDown, value, []byte("not the secret"))).To(Equal(http.StatusUnauthorized))
	g.Consistently(func(g Gomega) {
		g.Expect(record(g).Status.Votes[0].Value).To(Equal("up"))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	// A second 👍 is idempotent; a 👎 moves the vote.
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionFeedbackUp, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(clicks.said, eventually, 100*time.Millisecond).Should(ContainElement(ContainSubstring("already recorded")))
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionFeedbackDown, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Status.Votes).To(HaveLen(1))
		g.Expect(rec.Status.Votes[0].Value).To(Equal("down"))
		tr := trust(g)
		g.Expect(tr.Up).To(Equal(int32(0)))
		g.Expect(tr.Down).To(Equal(int32(1)))
	}, eventually, 200*time.Millisecond).Should(Succeed())

	// 🔕 asks for a duration; the choice silences the Incident, stamped
	// with the Slack user.
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionSilence, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(clicks.said, eventually, 100*time.Millisecond).Should(ContainElement(ContainSubstring("For how long")))
	g.Expect(clicks.choose("UA8RXUSPL", notify.ActionSilence, value+"/4h0m0s")).To(Equal(http.StatusOK))
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
		g.Expect(inc.Annotations).To(HaveKeyWithValue(runlorev1.SilenceAnnotation, "4h0m0s"))
		g.Expect(inc.Annotations).To(HaveKeyWithValue("runlore.io/silence-by", "slack:UA8RXUSPL"))
		g.Expect(inc.Status.SilencedUntil).NotTo(BeNil())
		g.Expect(inc.Status.SilencedUntil.Time).To(BeTemporally("~", time.Now().Add(4*time.Hour), time.Minute))
	}, eventually, 200*time.Millisecond).Should(Succeed())

	// Someone patching the vote record by hand is still refused.
	inv = getInvestigation(g, ns, "inc-1")
	patch := client.MergeFrom(inv.DeepCopy())
	inv.Annotations[admission.VotesAnnotation] = `{"slack:UA8RXUSPL":"up"}`
	g.Expect(patchAsOperator(ctx, inv, patch)).To(MatchError(ContainSubstring("does not verify")))
}

// patchAsOperator patches as the operator's own user, whose hand-made
// vote record must still verify.
func patchAsOperator(ctx context.Context, obj client.Object, patch client.Patch) error {
	return k8sClient.Patch(ctx, obj, patch)
}

// TestSlackApprovalGoesThroughTheGate: an approve click from a Slack user
// the ActionPolicy names runs the action through the gate and the
// executor, attributed to slack:<user id>; the same click from anyone else
// is refused with the reason, and nothing runs.
func TestSlackApprovalGoesThroughTheGate(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	wo := withWebhook(t, ns)
	f := newApprovalFixtureWith(t, g, ns, func(opts Options) { startWithChat(t, ns, wo, opts, nil) }, Options{Stamps: testStamps})
	policy := &runlorev1.ActionPolicy{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oncall"}, policy)).To(Succeed())
	patch := client.MergeFrom(policy.DeepCopy())
	policy.Spec.Approvers.SlackUsers = []string{"U0ALICE"}
	g.Expect(k8sClient.Patch(ctx, policy, patch)).To(Succeed())

	clicks, _ := newClicker(t, ns)
	value := notify.ActionValue(ns, "inc-1", "suspend-apps")
	g.Expect(clicks.click("UA8RXUSPL", notify.ActionApprove, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(clicks.said, eventually, 100*time.Millisecond).Should(ContainElement(
		`⛔ runlore.io/approve: user "slack:UA8RXUSPL" is not among the approvers of ActionPolicy oncall`))
	g.Consistently(func(g Gomega) {
		g.Expect(f.suspended(g)).To(BeFalse())
		g.Expect(f.action(g).State).To(Equal(runlorev1.ActionPendingApproval))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	// Two earlier proposals of the same action went unanswered: approval
	// fatigue counts them, and a chat answer clears the streak as a
	// kubectl one does.
	key := action.Key(runlorev1.OpSuspend, runlorev1.ObjectReference{Kind: "Kustomization", Namespace: ns, Name: "apps"})
	g.Eventually(func() error {
		p := &runlorev1.ActionPolicy{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oncall"}, p); err != nil {
			return err
		}
		p.Status.Fatigue = []runlorev1.ActionFatigue{{Key: key, ConsecutiveExpiries: 2}}
		return k8sClient.Status().Update(ctx, p)
	}, eventually, 200*time.Millisecond).Should(Succeed())
	fatigued := func(g Gomega) bool {
		p := &runlorev1.ActionPolicy{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oncall"}, p)).To(Succeed())
		for _, fr := range p.Status.Fatigue {
			if fr.Key == key {
				return true
			}
		}
		return false
	}
	g.Consistently(fatigued, 2*time.Second, 200*time.Millisecond).Should(BeTrue(), "unanswered, the streak stands")

	g.Expect(clicks.click("U0ALICE", notify.ActionApprove, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(func(g Gomega) {
		a := f.action(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionExecuted), a.StateReason)
		g.Expect(a.DecidedBy).To(Equal("slack:U0ALICE"))
		g.Expect(f.suspended(g)).To(BeTrue())
	}, eventually, 200*time.Millisecond).Should(Succeed())
	inv := getInvestigation(g, ns, "inc-1")
	g.Expect(inv.Annotations).To(HaveKeyWithValue("runlore.io/approve-by", "slack:U0ALICE"))
	g.Eventually(fatigued, eventually, 200*time.Millisecond).Should(BeFalse(), "the answer ended the unanswered streak")

	// A click on an action already decided is refused with its state.
	g.Expect(clicks.click("U0ALICE", notify.ActionReject, value, slackSecret)).To(Equal(http.StatusOK))
	g.Eventually(clicks.said, eventually, 100*time.Millisecond).Should(ContainElement(ContainSubstring("action suspend-apps is already Executed")))
}

// TestSlackOutageNeverBlocksResolve: with Slack down, the Investigation
// finishes while the delivery is still being retried, and the failure is
// recorded once the retries run out.
func TestSlackOutageNeverBlocksResolve(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	api, ts := newSlackAPI(t)
	api.down = true
	routes, _ := notify.ParseRoutes("--slack-channels", "*="+slackRoom)
	app := &notify.SlackApp{Token: "xoxb-test", APIURL: ts.URL + "/api/", Channels: routes,
		Delivery: notify.Delivery{Attempts: 4, Backoff: 2 * time.Second}}
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Notifier: app})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
		g.Expect(rec.Annotations[DeliveryAnnotation]).To(Equal("pending"), "done while Slack is still being retried")
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
		g.Expect(rec.Annotations[DeliveryAnnotation]).To(HavePrefix("failed: HTTP 503 after 4 attempt(s)"))
	}, eventually+30*time.Second, 500*time.Millisecond).Should(Succeed())
	g.Expect(api.methods()).To(HaveLen(4))
}
