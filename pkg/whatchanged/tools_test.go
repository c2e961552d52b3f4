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

package whatchanged

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestWhatChangedTool(t *testing.T) {
	diff := strings.Repeat("+  line of a long diff\n", 2000)
	f := &Finder{
		Now: func() time.Time { return start.Add(time.Hour) },
		Collectors: []Collector{staticCollector{name: "flux", changes: []Change{
			{Source: SourceFlux, Summary: "Kustomization applied main@abc", At: start.Add(-10 * time.Minute),
				Object:  ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
				Objects: []ObjectRef{{Kind: "Deployment", Namespace: "shop", Name: "api"}}, Diff: diff},
			{Source: SourceKubernetes, Summary: "rollback", At: start.Add(20 * time.Minute),
				Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}},
		}}},
	}
	tool := &WhatChangedTool{Finder: f, Incident: Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}, MaxTextBytes: 4096}
	for _, tc := range []struct {
		name, args string
		err        string
		check      func(g Gomega, r Result)
	}{
		{name: "defaults to the incident", args: `{}`, check: func(g Gomega, r Result) {
			rep := r.Data.(Report)
			g.Expect(rep.Changes).To(HaveLen(2))
			g.Expect(rep.Changes[0].Relation).To(Equal(RelationWorkload))
			g.Expect(rep.Changes[1].CannotHaveCaused).To(BeTrue())
			g.Expect(len(r.Text)).To(BeNumerically("<=", 4096+512))
			g.Expect(r.Text).To(ContainSubstring("Kustomization applied main@abc"))
			g.Expect(r.Text).To(ContainSubstring("more changes not shown"), "the long diff exhausts the budget before the rollback")
		}},
		{name: "narrower window drops the older change", args: `{"window":"5m"}`, check: func(g Gomega, r Result) {
			g.Expect(r.Data.(Report).Changes).To(HaveLen(1))
		}},
		{name: "another workload ranks the Kustomization as namespace-level", args: `{"workload":"deployment/web"}`, check: func(g Gomega, r Result) {
			g.Expect(r.Data.(Report).Changes[0].Relation).To(Equal(RelationNamespace))
		}},
		{name: "bad window", args: `{"window":"-1h"}`, err: "window"},
		{name: "bad workload", args: `{"workload":"api"}`, err: "want kind/name"},
		{name: "bad start", args: `{"start":"yesterday"}`, err: "start"},
		{name: "unknown field", args: `{"namespce":"shop"}`, err: "namespce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := tool.Run(context.Background(), json.RawMessage(tc.args))
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, r)
		})
	}
}

func TestCloudWhatChangedToolReportsFailuresInText(t *testing.T) {
	g := NewWithT(t)
	var gotResource string
	tool := &CloudWhatChangedTool{
		Now: func() time.Time { return start },
		NewCollector: func(resource string) Collector {
			gotResource = resource
			return staticCollector{name: "aws", changes: []Change{
				{Source: SourceAWS, Summary: "rds:ModifyDBInstance", At: start.Add(-time.Minute), Object: ObjectRef{Kind: "AWS::RDS::DBInstance", Name: "arn:aws:rds:eu-west-1:1:db:orders"},
					Objects: []ObjectRef{{Kind: "cloud", Name: "orders"}}},
			}, err: errors.New("cloudtrail throttled the lookup")}
		},
	}
	r, err := tool.Run(context.Background(), json.RawMessage(`{"resource":"orders","window":"1h"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gotResource).To(Equal("orders"))
	rep := r.Data.(Report)
	g.Expect(rep.Changes).To(HaveLen(1))
	g.Expect(rep.Changes[0].Relation).To(Equal(RelationWorkload))
	g.Expect(r.Text).To(ContainSubstring("warning: cloud: cloudtrail throttled the lookup"))

	none := &CloudWhatChangedTool{}
	r, err = none.Run(context.Background(), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Text).To(ContainSubstring("no cloud provider"))
}

func TestToolsDescribeThemselves(t *testing.T) {
	g := NewWithT(t)
	tools := Tools(&Finder{}, Incident{}, nil, nil, func(string) Collector { return staticCollector{} })
	g.Expect(tools).To(HaveLen(2))
	for _, tool := range tools {
		g.Expect(tool.Name()).To(MatchRegexp(`^[a-z_]+$`))
		g.Expect(tool.Description()).NotTo(BeEmpty())
		g.Expect(tool.Parameters()["type"]).To(Equal("object"))
		_, err := json.Marshal(tool.Parameters())
		g.Expect(err).NotTo(HaveOccurred())
	}
}

func FuzzParseInventoryID(f *testing.F) {
	f.Add("shop_api_apps_Deployment")
	f.Add("_ns__Namespace")
	f.Add("a_b_c")
	f.Fuzz(func(t *testing.T, id string) {
		ref, group, err := ParseInventoryID(id)
		if err != nil {
			return
		}
		if ref.Namespace+"_"+ref.Name+"_"+group+"_"+ref.Kind != id {
			t.Fatalf("%q parsed to %+v %q, which does not rebuild it", id, ref, group)
		}
	})
}

type staticHealth struct {
	h   CloudHealth
	err error
}

func (s staticHealth) Health(context.Context, string) (CloudHealth, error) { return s.h, s.err }

func TestCloudResourceHealthTool(t *testing.T) {
	many := CloudHealth{ARN: "arn:aws:autoscaling:eu-west-1:1:autoScalingGroup:u:autoScalingGroupName/nodes", Kind: "autoscaling:group", Name: "nodes",
		Region: "eu-west-1", State: "Active", Status: HealthDegraded, Problems: []string{"2 of 300 desired instances InService and Healthy"}}
	for i := 0; i < 300; i++ {
		state := "InService"
		if i%3 == 0 {
			state = "Pending"
		}
		many.Members = append(many.Members, CloudHealthMember{ID: fmt.Sprintf("i-%017x", i), Zone: "eu-west-1a", State: state, Health: "Healthy"})
	}
	for _, tc := range []struct {
		name    string
		checker CloudHealthChecker
		args    string
		wantErr string
		check   func(g Gomega, r Result)
	}{
		{name: "bounded text, members not in service first", checker: staticHealth{h: many}, args: `{"arn":"` + many.ARN + `"}`,
			check: func(g Gomega, r Result) {
				g.Expect(len(r.Text)).To(BeNumerically("<=", 1024+64))
				g.Expect(r.Text).To(HavePrefix("autoscaling:group nodes: DEGRADED (state Active) in eu-west-1\n  problem: 2 of 300"))
				g.Expect(r.Text).To(ContainSubstring("more lines not shown"))
				g.Expect(r.Text).NotTo(ContainSubstring("InService Healthy"), "pending members fill the bound before healthy ones")
				g.Expect(r.Data.(CloudHealth).Members).To(HaveLen(300), "the structured form keeps what the checker returned")
			}},
		{name: "cloud failure after a partial read is text", checker: staticHealth{h: CloudHealth{Kind: "rds:db", Name: "orders", State: "available", Status: HealthHealthy},
			err: errors.New("aws throttled the call (Throttling)")}, args: `{"arn":"arn:aws:rds:eu-west-1:1:db:orders"}`,
			check: func(g Gomega, r Result) {
				g.Expect(r.Text).To(Equal("rds:db orders: HEALTHY (state available)\nwarning: cloud: aws throttled the call (Throttling)\n"))
			}},
		{name: "invalid resource is an argument error", checker: staticHealth{err: fmt.Errorf("%w: arn %q: not an ARN", ErrInvalidResource, "x")},
			args: `{"arn":"x"}`, wantErr: "invalid resource: arn"},
		{name: "misspelt argument", checker: staticHealth{}, args: `{"resource":"x"}`, wantErr: `unknown field "resource"`},
		{name: "no arn", checker: staticHealth{}, args: `{"arn":"  "}`, wantErr: "arn: required"},
		{name: "no provider", args: `{"arn":"arn:aws:rds:eu-west-1:1:db:orders"}`,
			check: func(g Gomega, r Result) { g.Expect(r.Text).To(ContainSubstring("no cloud provider")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tool := &CloudResourceHealthTool{Checker: tc.checker, MaxTextBytes: 1024}
			if tc.checker == nil {
				tool.Checker = nil
			}
			r, err := tool.Run(context.Background(), json.RawMessage(tc.args))
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, r)
		})
	}
	g := NewWithT(t)
	tool := &CloudResourceHealthTool{}
	g.Expect(tool.Name()).To(Equal("cloud_resource_health"))
	g.Expect(tool.Parameters()["required"]).To(Equal([]string{"arn"}))
}

func FuzzCloudHealthText(f *testing.F) {
	f.Add("nodes", "Active", "problem", "i-1", "Pending", 200)
	f.Add("", "", "", "", "", 0)
	f.Fuzz(func(t *testing.T, name, state, problem, member, memberState string, max int) {
		max = max%4096 + 256
		if max < 256 {
			max += 4096
		}
		h := CloudHealth{Kind: "autoscaling:group", Name: name, State: state, Status: HealthDegraded, Problems: []string{problem, problem}}
		for i := 0; i < 50; i++ {
			h.Members = append(h.Members, CloudHealthMember{ID: member, State: memberState, Health: "Healthy"})
		}
		text := h.Text(max)
		if len(text) > max+64 {
			t.Fatalf("text of %d bytes exceeds bound %d", len(text), max)
		}
	})
}
