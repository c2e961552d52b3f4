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

package aws

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudtrail/types"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/whatchanged"
)

const lookupTarget = "CloudTrail_20131101.LookupEvents"

// cloudTrail is a local endpoint speaking the AWS JSON 1.1 protocol. It
// answers LookupEvents from recorded pages keyed by NextToken, or with the
// error it is told to return.
type cloudTrail struct {
	t        *testing.T
	errType  string
	status   int
	requests atomic.Int32
	lastBody map[string]any
}

func (c *cloudTrail) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.requests.Add(1)
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != lookupTarget {
		http.Error(w, "unexpected call "+r.Header.Get("X-Amz-Target"), http.StatusBadRequest)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
		http.Error(w, "unsigned request", http.StatusForbidden)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	body := map[string]any{}
	_ = json.Unmarshal(raw, &body)
	c.lastBody = body
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if c.errType != "" {
		w.Header().Set("X-Amzn-ErrorType", c.errType)
		w.WriteHeader(c.status)
		_, _ = w.Write([]byte(`{"__type":"` + c.errType + `","message":"recorded failure"}`))
		return
	}
	page := "lookupevents-page1.json"
	if body["NextToken"] == "page-2" {
		page = "lookupevents-page2.json"
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "aws", page))
	if err != nil {
		c.t.Errorf("read recorded page: %v", err)
	}
	_, _ = w.Write(data)
}

func newCollector(t *testing.T, srv *httptest.Server) *Collector {
	t.Helper()
	// Keep the SDK's default chain hermetic: nothing from the host's
	// environment (a CA bundle, a profile) may reach the test.
	for _, k := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	c, err := New(context.Background(),
		config.WithRegion("eu-west-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", "")),
		config.WithBaseEndpoint(srv.URL),
		config.WithRetryMaxAttempts(1),
	)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return c
}

var incidentStart = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func TestLookupEventsKeepsMutatingEventsAcrossPages(t *testing.T) {
	g := NewWithT(t)
	ct := &cloudTrail{t: t}
	srv := httptest.NewServer(ct)
	t.Cleanup(srv.Close)

	inc := whatchanged.Incident{Kind: "rds:db", Name: "orders-db", Start: incidentStart}
	rep, err := (&whatchanged.Finder{
		Now:        func() time.Time { return incidentStart },
		Collectors: []whatchanged.Collector{newCollector(t, srv)},
	}).Timeline(context.Background(), inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Warnings).To(BeEmpty())
	g.Expect(ct.requests.Load()).To(BeEquivalentTo(2), "two recorded pages")
	g.Expect(ct.lastBody["LookupAttributes"]).To(Equal([]any{map[string]any{"AttributeKey": "ReadOnly", "AttributeValue": "false"}}))
	g.Expect(ct.lastBody["StartTime"]).To(BeNumerically("==", incidentStart.Add(-2*time.Hour).Unix()))

	var summaries []string
	for _, c := range rep.Changes {
		summaries = append(summaries, c.Summary)
		g.Expect(c.Source).To(Equal(whatchanged.SourceAWS))
	}
	g.Expect(summaries).To(Equal([]string{
		"rds:ModifyDBInstance on arn:aws:rds:eu-west-1:123456789012:db:orders-db by alice",
		"autoscaling:UpdateAutoScalingGroup on eks-nodes-a by bob",
		"ec2:AuthorizeSecurityGroupIngress on sg-0abc by carol",
	}), "Describe*/Get* and ReadOnly events are dropped; the RDS change ranks first as it names the incident's resource")
	g.Expect(rep.Changes[0].Relation).To(Equal(whatchanged.RelationWorkload))
	g.Expect(rep.Changes[0].Message).To(Equal("region eu-west-1, account 123456789012, event e1"))
	g.Expect(rep.Changes[2].Note).To(ContainSubstring("UnauthorizedOperation"))
	g.Expect(rep.Text(0)).NotTo(ContainSubstring("HUNTER2"))
}

func TestLookupFailuresAreClearAndNonFatal(t *testing.T) {
	for _, tc := range []struct {
		errType string
		status  int
		want    error
		says    string
	}{
		{errType: "ThrottlingException", status: 400, want: ErrThrottled, says: "retry later"},
		{errType: "UnrecognizedClientException", status: 400, want: ErrCredentials, says: "IRSA role or Pod Identity"},
		{errType: "AccessDeniedException", status: 400, want: ErrCredentials, says: "cloudtrail:LookupEvents"},
	} {
		t.Run(tc.errType, func(t *testing.T) {
			g := NewWithT(t)
			srv := httptest.NewServer(&cloudTrail{t: t, errType: tc.errType, status: tc.status})
			t.Cleanup(srv.Close)
			c := newCollector(t, srv)
			_, err := c.Collect(context.Background(), Window(time.Hour, incidentStart))
			g.Expect(err).To(MatchError(tc.want))
			g.Expect(err.Error()).To(ContainSubstring(tc.says))
			g.Expect(err.Error()).NotTo(ContainSubstring("test-secret"))

			rep, err := (&whatchanged.Finder{Collectors: []whatchanged.Collector{c}}).Timeline(context.Background(),
				whatchanged.Incident{Namespace: "shop", Start: incidentStart}, time.Hour)
			g.Expect(err).NotTo(HaveOccurred(), "a cloud failure never fails the timeline")
			g.Expect(rep.Warnings).To(ConsistOf(HavePrefix("aws: ")))
		})
	}
}

func FuzzChangeOfEvent(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "aws", "lookupevents-page1.json"))
	if err != nil {
		f.Fatal(err)
	}
	var page struct {
		Events []struct{ CloudTrailEvent, EventName, ReadOnly string }
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		f.Fatal(err)
	}
	for _, e := range page.Events {
		f.Add(e.EventName, e.ReadOnly, e.CloudTrailEvent)
	}
	f.Fuzz(func(t *testing.T, name, readOnly, record string) {
		at := incidentStart
		ev := types.Event{EventName: &name, ReadOnly: &readOnly, CloudTrailEvent: &record, EventTime: &at}
		ch, ok := changeOf(ev, whatchanged.Incident{Name: "orders-db", Start: incidentStart})
		if !ok {
			return
		}
		if readOnly == "true" || strings.HasPrefix(name, "Describe") {
			t.Fatalf("read-only event %q kept", name)
		}
		if strings.Contains(ch.Summary+ch.Message+ch.Note, "requestParameters") {
			t.Fatalf("request parameters leaked: %+v", ch)
		}
	})
}
