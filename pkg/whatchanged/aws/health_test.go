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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/whatchanged"
)

// queryVersions are the API versions the AWS Query services put in every
// request; a request with another version is not the real wire protocol.
var queryVersions = map[string]string{
	"DescribeInstances":         "2016-11-15",
	"DescribeInstanceStatus":    "2016-11-15",
	"DescribeAutoScalingGroups": "2011-01-01",
	"DescribeScalingActivities": "2011-01-01",
	"DescribeDBInstances":       "2014-10-31",
	"DescribeEvents":            "2014-10-31",
}

// reply is what the local endpoint answers one operation with: a recorded
// response file, or an AWS error of the service's own shape.
type reply struct {
	file    string
	status  int
	errCode string
	body    string // a generated response body, used instead of file
}

// seenCall is one request the endpoint received.
type seenCall struct {
	Action  string
	Service string // from the SigV4 credential scope
	Region  string // from the SigV4 credential scope
	Params  url.Values
	Path    string
}

var credentialScope = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDTEST/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request`)
var nodegroupPath = regexp.MustCompile(`^/clusters/([^/]+)/node-groups/([^/]+)$`)

// awsEndpoint is a local endpoint speaking EC2's and Auto Scaling's and
// RDS's AWS Query protocol (form-encoded POST, XML answers) and EKS's
// REST-JSON protocol, answering each operation with its reply.
type awsEndpoint struct {
	t       testing.TB
	replies map[string]reply
	mu      sync.Mutex
	calls   []seenCall
}

func (e *awsEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		http.Error(w, "unsigned request", http.StatusForbidden)
		return
	}
	call := seenCall{Region: m[1], Service: m[2], Path: r.URL.Path}
	switch {
	case r.Method == http.MethodGet && nodegroupPath.MatchString(r.URL.Path):
		call.Action = "DescribeNodegroup"
	case r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		raw, _ := io.ReadAll(r.Body)
		params, err := url.ParseQuery(string(raw))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		call.Params = params
		call.Action = params.Get("Action")
		if want := queryVersions[call.Action]; want == "" || params.Get("Version") != want {
			http.Error(w, "unexpected action or version "+call.Action+" "+params.Get("Version"), http.StatusBadRequest)
			return
		}
	default:
		http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.calls = append(e.calls, call)
	rep, ok := e.replies[call.Action]
	e.mu.Unlock()
	if !ok {
		http.Error(w, "no reply recorded for "+call.Action, http.StatusNotImplemented)
		return
	}
	if rep.errCode != "" {
		writeAWSError(w, call.Service, rep.status, rep.errCode)
		return
	}
	body := []byte(rep.body)
	if rep.file != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", "health", rep.file)); err != nil {
			e.t.Errorf("read recorded response: %v", err)
		}
	}
	if call.Service == "eks" {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	}
	// AWS sends a Content-Length, never a chunked body.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// writeAWSError writes an error the way each service does: EC2's
// <Response><Errors>, the Query services' <ErrorResponse>, EKS's
// X-Amzn-ErrorType header with a JSON body.
func writeAWSError(w http.ResponseWriter, service string, status int, code string) {
	msg := "recorded failure for " + code
	switch service {
	case "ec2":
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>9b2f4a1c-0000-4000-8000-000000000001</RequestID></Response>`, code, msg)
	case "eks":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", code+":http://internal.amazon.com/coral/com.amazonaws.eks/")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":%q}`, msg)
	default:
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<ErrorResponse xmlns="http://%s.amazonaws.com/doc/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>9b2f4a1c-0000-4000-8000-000000000002</RequestId></ErrorResponse>`, service, code, msg)
	}
}

func (e *awsEndpoint) seen() []seenCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]seenCall(nil), e.calls...)
}

func newHealthChecker(t testing.TB, replies map[string]reply) (*HealthChecker, *awsEndpoint) {
	return newHealthCheckerAttempts(t, replies, 1)
}

// newHealthCheckerAttempts is newHealthChecker with the SDK's attempt
// count: the failure tests make one attempt so a recorded error is seen as
// sent; the others may use the SDK's default, as production does.
func newHealthCheckerAttempts(t testing.TB, replies map[string]reply, attempts int) (*HealthChecker, *awsEndpoint) {
	t.Helper()
	ep := &awsEndpoint{t: t, replies: replies}
	srv := httptest.NewServer(ep)
	t.Cleanup(srv.Close)
	// Keep the SDK's default chain hermetic: nothing from the host's
	// environment (a CA bundle, a profile) may reach the test.
	for _, k := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	h, err := NewHealthChecker(context.Background(),
		config.WithRegion("eu-west-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", "")),
		config.WithBaseEndpoint(srv.URL),
		config.WithRetryMaxAttempts(attempts),
	)
	if err != nil {
		t.Fatalf("NewHealthChecker: %v", err)
	}
	h.Now = func() time.Time { return incidentStart }
	return h, ep
}

const (
	instanceARN  = "arn:aws:ec2:eu-west-1:123456789012:instance/i-0a1b2c3d4e5f60718"
	groupARN     = "arn:aws:autoscaling:eu-west-1:123456789012:autoScalingGroup:5c4e1f9a-6a8d-4a1f-9b7e-2d3c4b5a6f70:autoScalingGroupName/eks-nodes-a"
	nodegroupARN = "arn:aws:eks:eu-west-1:123456789012:nodegroup/shop/general/6ec6a1b2-3c4d-5e6f-7a8b-9c0d1e2f3a4b"
	dbARN        = "arn:aws:rds:eu-west-1:123456789012:db:orders-db"
)

func TestResourceHealthFromRecordedResponses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arn     string
		replies map[string]reply
		check   func(g Gomega, h whatchanged.CloudHealth, calls []seenCall)
	}{{
		name: "ec2 instance with an impaired system check and a scheduled retirement",
		arn:  instanceARN,
		replies: map[string]reply{
			"DescribeInstances":      {file: "ec2-describeinstances-running.xml"},
			"DescribeInstanceStatus": {file: "ec2-describeinstancestatus-impaired.xml"},
		},
		check: func(g Gomega, h whatchanged.CloudHealth, calls []seenCall) {
			g.Expect(h.Kind).To(Equal(KindEC2Instance))
			g.Expect(h.State).To(Equal("running"))
			g.Expect(h.Status).To(Equal(whatchanged.HealthUnhealthy))
			g.Expect(h.Problems).To(Equal([]string{
				"system status check impaired (reachability failed since 2026-11-30T01:52:00Z)",
				"scheduled instance-retirement not before 2026-12-03T00:00:00Z: The instance is running on degraded hardware",
			}), "the completed reboot is listed as an event but is not a problem")
			g.Expect(h.Events).To(HaveLen(2))
			g.Expect(h.Facts).To(ContainElements("type m5.large", "zone eu-west-1a", "launched 2026-11-28T09:15:02Z",
				"tag Name=shop-node-1", "tag aws:autoscaling:groupName=eks-nodes-a"))
			g.Expect(strings.Join(h.Facts, "\n")).NotTo(ContainSubstring("team"), "only tags that identify the instance are shown")
			g.Expect(calls).To(HaveLen(2))
			g.Expect(calls[0].Params.Get("InstanceId.1")).To(Equal("i-0a1b2c3d4e5f60718"))
			g.Expect(calls[1].Params.Get("IncludeAllInstances")).To(Equal("true"))
		},
	}, {
		name: "ec2 instance running with passing checks",
		arn:  instanceARN,
		replies: map[string]reply{
			"DescribeInstances":      {file: "ec2-describeinstances-running.xml"},
			"DescribeInstanceStatus": {file: "ec2-describeinstancestatus-ok.xml"},
		},
		check: func(g Gomega, h whatchanged.CloudHealth, _ []seenCall) {
			g.Expect(h.Status).To(Equal(whatchanged.HealthHealthy))
			g.Expect(h.Problems).To(BeEmpty())
		},
	}, {
		name: "ec2 instance stopped by a user",
		arn:  instanceARN,
		replies: map[string]reply{
			"DescribeInstances":      {file: "ec2-describeinstances-stopped.xml"},
			"DescribeInstanceStatus": {file: "ec2-describeinstancestatus-stopped.xml"},
		},
		check: func(g Gomega, h whatchanged.CloudHealth, _ []seenCall) {
			g.Expect(h.State).To(Equal("stopped"))
			g.Expect(h.Status).To(Equal(whatchanged.HealthUnhealthy))
			g.Expect(h.Problems).To(Equal([]string{"instance is stopped: Client.UserInitiatedShutdown: User initiated shutdown"}),
				"not-applicable status checks of a stopped instance add nothing")
		},
	}, {
		name: "auto scaling group short of capacity with a failed launch",
		arn:  groupARN,
		replies: map[string]reply{
			"DescribeAutoScalingGroups": {file: "asg-describeautoscalinggroups-degraded.xml"},
			"DescribeScalingActivities": {file: "asg-describescalingactivities-failed.xml"},
		},
		check: func(g Gomega, h whatchanged.CloudHealth, calls []seenCall) {
			g.Expect(h.Name).To(Equal("eks-nodes-a"))
			g.Expect(h.Status).To(Equal(whatchanged.HealthDegraded))
			g.Expect(h.Problems).To(Equal([]string{
				"1 of 3 desired instances InService and Healthy",
				"not in service or unhealthy: i-0b2c3d4e5f6071829 (InService, Unhealthy), i-0c3d4e5f607182930 (Pending, Healthy)",
				"process AZRebalance suspended: User suspended at 2026-11-30T01:10:00Z",
				"scaling activity failed at 2026-11-30T01:54:12Z: We currently do not have sufficient m5.large capacity in the Availability Zone you requested (eu-west-1b).",
			}))
			g.Expect(h.Members).To(HaveLen(3))
			g.Expect(h.Members[1]).To(Equal(whatchanged.CloudHealthMember{ID: "i-0b2c3d4e5f6071829", Zone: "eu-west-1b", State: "InService", Health: "Unhealthy"}))
			g.Expect(h.Facts).To(ContainElements("capacity desired 3, min 1, max 6", "health check EC2, grace 15s", "launch template eks-nodes-a version 7"))
			g.Expect(h.Events).To(HaveLen(2))
			g.Expect(h.Events[0].Code).To(Equal("Failed"))
			g.Expect(calls[0].Params.Get("AutoScalingGroupNames.member.1")).To(Equal("eks-nodes-a"))
			g.Expect(calls[1].Params.Get("AutoScalingGroupName")).To(Equal("eks-nodes-a"))
			g.Expect(calls[1].Params.Get("MaxRecords")).To(Equal("10"))
		},
	}, {
		name:    "eks node group degraded by launch failures",
		arn:     nodegroupARN,
		replies: map[string]reply{"DescribeNodegroup": {file: "eks-describenodegroup-degraded.json"}},
		check: func(g Gomega, h whatchanged.CloudHealth, calls []seenCall) {
			g.Expect(h.Kind).To(Equal(KindEKSNodegroup))
			g.Expect(h.State).To(Equal("DEGRADED"))
			g.Expect(h.Status).To(Equal(whatchanged.HealthUnhealthy))
			g.Expect(h.Problems).To(HaveLen(2))
			g.Expect(h.Problems[0]).To(HavePrefix("AsgInstanceLaunchFailures: Could not launch On-Demand Instances."))
			g.Expect(h.Problems[1]).To(Equal("NodeCreationFailure: Instances failed to join the kubernetes cluster " +
				"(i-0b2c3d4e5f6071829, i-0c3d4e5f607182930, i-0d4e5f60718293041, i-0e5f6071829304152, i-0f60718293041526a and 1 more)"))
			g.Expect(h.Facts).To(ContainElements("cluster shop", "scaling desired 3, min 2, max 6", "instance types m5.large (ON_DEMAND)",
				"kubernetes 1.33, release 1.33.5-20261112", "auto scaling groups eks-general-6ec6a1b2-3c4d-5e6f-7a8b-9c0d1e2f3a4b"))
			g.Expect(calls).To(HaveLen(1))
			g.Expect(calls[0].Path).To(Equal("/clusters/shop/node-groups/general"))
		},
	}, {
		name: "rds instance being modified after a failover",
		arn:  dbARN,
		replies: map[string]reply{
			"DescribeDBInstances": {file: "rds-describedbinstances-modifying.xml"},
			"DescribeEvents":      {file: "rds-describeevents.xml"},
		},
		check: func(g Gomega, h whatchanged.CloudHealth, calls []seenCall) {
			g.Expect(h.State).To(Equal("modifying"))
			g.Expect(h.Status).To(Equal(whatchanged.HealthDegraded))
			g.Expect(h.Problems).To(Equal([]string{
				"DB instance is modifying",
				"read replication error: Replication has stopped due to a storage-full condition on the replica.",
			}))
			g.Expect(h.Facts).To(ContainElements("engine postgres 16.4, class db.r6g.large", "multi-AZ, primary eu-west-1a, standby eu-west-1b",
				"storage 200 GiB gp3", "pending modifications: class db.r6g.xlarge, storage 400 GiB"))
			g.Expect(h.Events).To(HaveLen(3))
			g.Expect(h.Events[0]).To(Equal(whatchanged.CloudHealthEvent{At: time.Date(2026, 11, 30, 1, 48, 3, 120e6, time.UTC), Code: "failover", Message: "Multi-AZ instance failover started."}))
			g.Expect(calls[0].Params.Get("DBInstanceIdentifier")).To(Equal("orders-db"))
			g.Expect(calls[1].Params.Get("SourceType")).To(Equal("db-instance"))
			g.Expect(calls[1].Params.Get("StartTime")).To(Equal("2026-11-29T02:00:00Z"), "the last day before now")
			text := h.Text(0)
			g.Expect(text).NotTo(ContainSubstring("orders_admin"), "the master user name is not health")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			h, ep := newHealthChecker(t, tc.replies)
			got, err := h.Health(context.Background(), tc.arn)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.ARN).To(Equal(tc.arn))
			g.Expect(got.Region).To(Equal("eu-west-1"))
			calls := ep.seen()
			for _, c := range calls {
				g.Expect(c.Region).To(Equal("eu-west-1"))
			}
			tc.check(g, got, calls)
		})
	}
}

func TestHealthCallsAreSignedForTheARNRegion(t *testing.T) {
	g := NewWithT(t)
	h, ep := newHealthChecker(t, map[string]reply{
		"DescribeDBInstances": {file: "rds-describedbinstances-modifying.xml"},
		"DescribeEvents":      {file: "rds-describeevents.xml"},
	})
	_, err := h.Health(context.Background(), "arn:aws:rds:us-east-2:123456789012:db:orders-db")
	g.Expect(err).NotTo(HaveOccurred())
	calls := ep.seen()
	g.Expect(calls).To(HaveLen(2))
	for _, c := range calls {
		g.Expect(c.Region).To(Equal("us-east-2"), "the client is configured for eu-west-1; the ARN's region wins")
		g.Expect(c.Service).To(Equal("rds"))
	}
}

func TestHealthFailuresAreClearAndNonFatal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arn     string
		replies map[string]reply
		want    error
		says    string
		// partial is the state read before the failure, if any.
		partial string
	}{
		{name: "ec2 throttled", arn: instanceARN, replies: map[string]reply{"DescribeInstances": {status: 503, errCode: "RequestLimitExceeded"}},
			want: ErrThrottled, says: "retry in a minute"},
		{name: "ec2 status throttled after the instance was read", arn: instanceARN, replies: map[string]reply{
			"DescribeInstances":      {file: "ec2-describeinstances-running.xml"},
			"DescribeInstanceStatus": {status: 503, errCode: "RequestLimitExceeded"}},
			want: ErrThrottled, says: "EC2 rate-limits", partial: "running"},
		{name: "ec2 credentials rejected", arn: instanceARN, replies: map[string]reply{"DescribeInstances": {status: 401, errCode: "AuthFailure"}},
			want: ErrCredentials, says: "allows ec2:DescribeInstances"},
		{name: "ec2 instance gone", arn: instanceARN, replies: map[string]reply{"DescribeInstances": {status: 400, errCode: "InvalidInstanceID.NotFound"}},
			want: ErrNotFound, says: "InvalidInstanceID.NotFound"},
		{name: "autoscaling throttled", arn: groupARN, replies: map[string]reply{"DescribeAutoScalingGroups": {status: 400, errCode: "Throttling"}},
			want: ErrThrottled, says: "Auto Scaling rate-limits"},
		{name: "autoscaling group missing", arn: groupARN, replies: map[string]reply{"DescribeAutoScalingGroups": {file: "asg-describeautoscalinggroups-empty.xml"}},
			want: ErrNotFound, says: "Auto Scaling group eks-nodes-a in eu-west-1"},
		{name: "eks access denied", arn: nodegroupARN, replies: map[string]reply{"DescribeNodegroup": {status: 403, errCode: "AccessDeniedException"}},
			want: ErrCredentials, says: "eks:DescribeNodegroup"},
		{name: "eks node group missing", arn: nodegroupARN, replies: map[string]reply{"DescribeNodegroup": {status: 404, errCode: "ResourceNotFoundException"}},
			want: ErrNotFound, says: "ResourceNotFoundException"},
		{name: "rds token invalid", arn: dbARN, replies: map[string]reply{"DescribeDBInstances": {status: 403, errCode: "InvalidClientTokenId"}},
			want: ErrCredentials, says: "IRSA role or Pod Identity"},
		{name: "rds instance missing", arn: dbARN, replies: map[string]reply{"DescribeDBInstances": {status: 404, errCode: "DBInstanceNotFound"}},
			want: ErrNotFound, says: "DBInstanceNotFound"},
		{name: "rds events throttled after the instance was read", arn: dbARN, replies: map[string]reply{
			"DescribeDBInstances": {file: "rds-describedbinstances-modifying.xml"},
			"DescribeEvents":      {status: 400, errCode: "Throttling"}},
			want: ErrThrottled, says: "RDS rate-limits", partial: "modifying"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			h, _ := newHealthChecker(t, tc.replies)
			got, err := h.Health(context.Background(), tc.arn)
			g.Expect(err).To(MatchError(tc.want))
			g.Expect(err.Error()).To(ContainSubstring(tc.says))
			g.Expect(err.Error()).NotTo(ContainSubstring("test-secret"))
			g.Expect(got.State).To(Equal(tc.partial))

			// Through the tool, the failure is text the model reads, not an error.
			res, err := (&whatchanged.CloudResourceHealthTool{Checker: h}).Run(context.Background(), json.RawMessage(`{"arn":"`+tc.arn+`"}`))
			g.Expect(err).NotTo(HaveOccurred(), "a cloud failure never fails the investigation")
			g.Expect(res.Text).To(ContainSubstring("warning: cloud: "))
			g.Expect(res.Text).To(ContainSubstring(tc.says))
			if tc.partial != "" {
				g.Expect(res.Text).To(ContainSubstring("(state " + tc.partial + ")"))
			} else {
				g.Expect(res.Text).To(HavePrefix("warning: cloud: "), "nothing was read, so nothing but the warning is shown")
			}
		})
	}
}

func TestMissingCredentialsAreExplained(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(&awsEndpoint{t: t})
	t.Cleanup(srv.Close)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CA_BUNDLE", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	h, err := NewHealthChecker(context.Background(), config.WithRegion("eu-west-1"), config.WithBaseEndpoint(srv.URL), config.WithRetryMaxAttempts(1))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = h.Health(context.Background(), dbARN)
	g.Expect(err).To(MatchError(ErrCredentials))
	g.Expect(err.Error()).To(ContainSubstring("no credentials found in the default chain"))
}

func TestParseResourceARN(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Resource
		err  string
	}{
		{in: instanceARN, want: Resource{ARN: instanceARN, Kind: KindEC2Instance, Region: "eu-west-1", Name: "i-0a1b2c3d4e5f60718"}},
		{in: groupARN, want: Resource{ARN: groupARN, Kind: KindAutoScaling, Region: "eu-west-1", Name: "eks-nodes-a"}},
		{in: nodegroupARN, want: Resource{ARN: nodegroupARN, Kind: KindEKSNodegroup, Region: "eu-west-1", Cluster: "shop", Name: "general"}},
		{in: dbARN, want: Resource{ARN: dbARN, Kind: KindRDSDBInstance, Region: "eu-west-1", Name: "orders-db"}},
		{in: "arn:aws-us-gov:rds:us-gov-west-1:123456789012:db:ledger", want: Resource{ARN: "arn:aws-us-gov:rds:us-gov-west-1:123456789012:db:ledger", Kind: KindRDSDBInstance, Region: "us-gov-west-1", Name: "ledger"}},
		{in: "i-0a1b2c3d4e5f60718", err: "not an ARN"},
		{in: "arn:aws:ec2::123456789012:instance/i-0a1b2c3d4e5f60718", err: "no region"},
		{in: "arn:aws:ec2:eu-west-1:123456789012:volume/vol-0123", err: "instance/i-<id>"},
		{in: "arn:aws:eks:eu-west-1:123456789012:cluster/shop", err: "nodegroup/<cluster>/<nodegroup>"},
		{in: "arn:aws:rds:eu-west-1:123456789012:cluster:orders", err: "db:<identifier>"},
		{in: "arn:aws:autoscaling:eu-west-1:123456789012:launchConfiguration:x:launchConfigurationName/y", err: "autoScalingGroupName"},
		{in: "arn:aws:s3:::bucket", err: "no region"},
		{in: "arn:aws:lambda:eu-west-1:123456789012:function:checkout", err: "service lambda is not one of"},
		{in: "arn:aws:rds:eu-west-1:1:db:" + strings.Repeat("x", maxARNBytes), err: "too long"},
	} {
		t.Run(tc.in[:min(len(tc.in), 60)], func(t *testing.T) {
			g := NewWithT(t)
			got, err := ParseResourceARN(tc.in)
			if tc.err != "" {
				g.Expect(err).To(MatchError(whatchanged.ErrInvalidResource))
				g.Expect(err.Error()).To(ContainSubstring("arn "))
				g.Expect(err.Error()).To(ContainSubstring(tc.err))
				g.Expect(len(err.Error())).To(BeNumerically("<", 1000), "a long ARN is cut in the message")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestToolRejectsBadARNAsAnArgumentError(t *testing.T) {
	g := NewWithT(t)
	h, ep := newHealthChecker(t, nil)
	tool := &whatchanged.CloudResourceHealthTool{Checker: h}
	_, err := tool.Run(context.Background(), json.RawMessage(`{"arn":"arn:aws:sqs:eu-west-1:1:queue"}`))
	g.Expect(err).To(MatchError(whatchanged.ErrInvalidResource))
	_, err = tool.Run(context.Background(), json.RawMessage(`{}`))
	g.Expect(err).To(MatchError(ContainSubstring("arn: required")))
	g.Expect(ep.seen()).To(BeEmpty(), "no AWS call is made for an ARN that cannot be checked")
}

func TestHealthIsBounded(t *testing.T) {
	g := NewWithT(t)
	// About one read in a few hundred of this 55 KB answer fails in the
	// SDK's transport with "use of closed network connection", with or
	// without connection reuse; the SDK's standard retry (production's
	// setting) absorbs it. What this test checks is the bound.
	h, _ := newHealthCheckerAttempts(t, map[string]reply{
		"DescribeAutoScalingGroups": {body: bigGroup(200, 40)},
		"DescribeScalingActivities": {file: "asg-describescalingactivities-failed.xml"},
	}, 3)
	h.MaxItems = 10
	got, err := h.Health(context.Background(), groupARN)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Members).To(HaveLen(10))
	g.Expect(got.Omitted).To(Equal(190))
	g.Expect(got.Problems[0]).To(Equal("160 of 200 desired instances InService and Healthy"), "the counts cover every instance, not just those listed")
	g.Expect(got.Problems[1]).To(HaveSuffix("and 35 more"))
	text := got.Text(1024)
	g.Expect(len(text)).To(BeNumerically("<=", 1024+64))
	g.Expect(text).To(ContainSubstring("more lines not shown"))
	g.Expect(text).To(MatchRegexp(`member i-[0-9a-f]+ eu-west-1b Pending Healthy`), "members not in service are listed first")
}

// bigGroup renders a DescribeAutoScalingGroups answer for a group of n
// instances, the first unhealthy of which are Pending.
func bigGroup(n, unhealthy int) string {
	var b strings.Builder
	b.WriteString(`<DescribeAutoScalingGroupsResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><DescribeAutoScalingGroupsResult><AutoScalingGroups><member>`)
	fmt.Fprintf(&b, `<AutoScalingGroupName>eks-nodes-a</AutoScalingGroupName><MinSize>1</MinSize><MaxSize>%d</MaxSize><DesiredCapacity>%d</DesiredCapacity><HealthCheckType>EC2</HealthCheckType><Instances>`, n, n)
	for i := 0; i < n; i++ {
		state := "InService"
		if i < unhealthy {
			state = "Pending"
		}
		fmt.Fprintf(&b, `<member><InstanceId>i-%017x</InstanceId><AvailabilityZone>eu-west-1b</AvailabilityZone><LifecycleState>%s</LifecycleState><HealthStatus>Healthy</HealthStatus><InstanceType>m5.large</InstanceType><ProtectedFromScaleIn>false</ProtectedFromScaleIn></member>`, i+1, state)
	}
	b.WriteString(`</Instances></member></AutoScalingGroups></DescribeAutoScalingGroupsResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeAutoScalingGroupsResponse>`)
	return b.String()
}

func BenchmarkAutoScalingGroupHealth(b *testing.B) {
	for _, n := range []int{50, 200} {
		h, _ := newHealthChecker(b, map[string]reply{
			"DescribeAutoScalingGroups": {body: bigGroup(n, n/10)},
			"DescribeScalingActivities": {file: "asg-describescalingactivities-failed.xml"},
		})
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				got, err := h.Health(context.Background(), groupARN)
				if err != nil || got.Status != whatchanged.HealthDegraded {
					b.Fatalf("health: %v %s", err, got.Status)
				}
				_ = got.Text(0)
			}
		})
	}
}

func FuzzParseResourceARN(f *testing.F) {
	for _, s := range []string{instanceARN, groupARN, nodegroupARN, dbARN, "arn:aws:eks:eu-west-1:1:nodegroup/a/b", "arn:::::", "arn:aws:rds:r:a:db:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseResourceARN(s)
		if err != nil {
			if !errors.Is(err, whatchanged.ErrInvalidResource) {
				t.Fatalf("error %v does not wrap ErrInvalidResource", err)
			}
			return
		}
		if r.Name == "" || r.Region == "" || r.ARN != s {
			t.Fatalf("accepted %q with an empty part: %+v", s, r)
		}
		switch r.Kind {
		case KindEC2Instance, KindAutoScaling, KindRDSDBInstance:
		case KindEKSNodegroup:
			if r.Cluster == "" {
				t.Fatalf("node group %q without a cluster", s)
			}
		default:
			t.Fatalf("unknown kind %q for %q", r.Kind, s)
		}
	})
}
