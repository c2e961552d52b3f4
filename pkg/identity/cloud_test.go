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

package identity

import (
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestCloudResourceOfARN(t *testing.T) {
	g := NewWithT(t)
	for arn, want := range map[string]runlorev1.Workload{
		"arn:aws:rds:eu-west-1:123456789012:db:orders":                  {Kind: KindRDSInstance, Name: "orders", Account: "123456789012", Region: "eu-west-1"},
		"arn:aws:rds:eu-west-1:123456789012:cluster:ledger":             {Kind: KindRDSCluster, Name: "ledger", Account: "123456789012", Region: "eu-west-1"},
		"arn:aws:sqs:us-east-1:123456789012:order-events":               {Kind: KindSQSQueue, Name: "order-events", Account: "123456789012", Region: "us-east-1"},
		"arn:aws:sns:us-east-1:123456789012:alerts:5f0c2a9d":            {Kind: KindSNSTopic, Name: "alerts", Account: "123456789012", Region: "us-east-1"},
		"arn:aws:s3:::invoices-archive/2026/01/a.pdf":                   {Kind: KindS3Bucket, Name: "invoices-archive"},
		"arn:aws:dynamodb:us-east-1:123456789012:table/carts/stream/x":  {Kind: KindDynamoDBTable, Name: "carts", Account: "123456789012", Region: "us-east-1"},
		"arn:aws:elasticache:us-east-1:123456789012:replicationgroup:s": {Kind: KindCacheReplGroup, Name: "s", Account: "123456789012", Region: "us-east-1"},
		"arn:aws-cn:kafka:cn-north-1:123456789012:cluster/events/8a9b":  {Kind: KindMSKCluster, Name: "events", Account: "123456789012", Region: "cn-north-1"},
	} {
		got, err := CloudResourceOfARN(arn)
		g.Expect(err).NotTo(HaveOccurred(), arn)
		g.Expect(got).To(Equal(want), arn)
	}
	for _, arn := range []string{
		"arn:aws:iam::123456789012:role/orders", // a role is no connection
		"arn:aws:kms:us-east-1:123456789012:key/1234",
		"arn:aws:rds:eu-west-1:123456789012:snapshot:s1",
		"arn:aws:rds:eu-west-1:123456789012:db:",
		"arn:aws:sqs:us-east-1:123456789012:",
		"arn:aws:rds:eu-west-1:12ab:db:orders",
		"arn:aws:rds:eu-west-1:1:db:or ders",
		"not an arn",
	} {
		_, err := CloudResourceOfARN(arn)
		g.Expect(err).To(HaveOccurred(), arn)
	}
}

func TestParseEndpoint(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		host, path string
		want       runlorev1.Workload
	}{
		{"orders.c9akciq32.eu-west-1.rds.amazonaws.com", "", runlorev1.Workload{Kind: KindRDSInstance, Name: "orders", Region: "eu-west-1"}},
		{"ledger.cluster-c9akciq32.eu-west-1.rds.amazonaws.com", "", runlorev1.Workload{Kind: KindRDSCluster, Name: "ledger", Region: "eu-west-1"}},
		{"ledger.cluster-ro-c9akciq32.eu-west-1.rds.amazonaws.com", "", runlorev1.Workload{Kind: KindRDSCluster, Name: "ledger", Region: "eu-west-1"}},
		{"pool.proxy-c9akciq32.eu-west-1.rds.amazonaws.com", "", runlorev1.Workload{Kind: KindRDSProxy, Name: "pool", Region: "eu-west-1"}},
		{"Orders.C9AKCIQ32.EU-WEST-1.RDS.AMAZONAWS.COM.", "", runlorev1.Workload{Kind: KindRDSInstance, Name: "orders", Region: "eu-west-1"}},
		{"master.sessions.abc123.use1.cache.amazonaws.com", "", runlorev1.Workload{Kind: KindCacheReplGroup, Name: "sessions"}},
		{"clustercfg.sessions.abc123.use1.cache.amazonaws.com", "", runlorev1.Workload{Kind: KindCacheReplGroup, Name: "sessions"}},
		{"sessions-001.abc123.0001.use1.cache.amazonaws.com", "", runlorev1.Workload{Kind: KindCacheCluster, Name: "sessions-001"}},
		{"tokens.abc123.cfg.use1.cache.amazonaws.com", "", runlorev1.Workload{Kind: KindCacheCluster, Name: "tokens"}},
		{"carts-x1y2z3.serverless.use1.cache.amazonaws.com", "", runlorev1.Workload{Kind: KindCacheServerless, Name: "carts"}},
		{"sqs.us-east-1.amazonaws.com", "/123456789012/order-events", runlorev1.Workload{Kind: KindSQSQueue, Name: "order-events", Account: "123456789012", Region: "us-east-1"}},
		{"us-east-1.queue.amazonaws.com", "/123456789012/order-events", runlorev1.Workload{Kind: KindSQSQueue, Name: "order-events", Account: "123456789012", Region: "us-east-1"}},
		{"invoices.s3.eu-west-1.amazonaws.com", "/2026/a.pdf", runlorev1.Workload{Kind: KindS3Bucket, Name: "invoices", Region: "eu-west-1"}},
		{"invoices.archive.s3.amazonaws.com", "", runlorev1.Workload{Kind: KindS3Bucket, Name: "invoices.archive"}},
		{"invoices.s3-eu-west-1.amazonaws.com", "", runlorev1.Workload{Kind: KindS3Bucket, Name: "invoices", Region: "eu-west-1"}},
		{"invoices.s3.dualstack.eu-west-1.amazonaws.com", "", runlorev1.Workload{Kind: KindS3Bucket, Name: "invoices", Region: "eu-west-1"}},
		{"s3.eu-west-1.amazonaws.com", "/invoices/2026/a.pdf", runlorev1.Workload{Kind: KindS3Bucket, Name: "invoices", Region: "eu-west-1"}},
		{"vpc-search-prod-abcdefghijklmnop.eu-west-1.es.amazonaws.com", "", runlorev1.Workload{Kind: KindOpenSearchDomain, Name: "search-prod", Region: "eu-west-1"}},
		{"b-1.events.a1b2c3.c2.kafka.eu-west-1.amazonaws.com", "", runlorev1.Workload{Kind: KindMSKCluster, Name: "events", Region: "eu-west-1"}},
		{"clustercfg.limits.abc123.memorydb.us-east-1.amazonaws.com", "", runlorev1.Workload{Kind: KindMemoryDBCluster, Name: "limits", Region: "us-east-1"}},
		{"warehouse.abc123.us-east-1.redshift.amazonaws.com", "", runlorev1.Workload{Kind: KindRedshiftCluster, Name: "warehouse", Region: "us-east-1"}},
	} {
		got, err := ParseEndpoint(tc.host, tc.path)
		g.Expect(err).NotTo(HaveOccurred(), tc.host)
		g.Expect(got).To(Equal(tc.want), tc.host)
	}
	for _, tc := range [][2]string{
		{"sts.amazonaws.com", ""},                  // a service, not a resource
		{"dynamodb.us-east-1.amazonaws.com", ""},   // names no table
		{"s3.eu-west-1.amazonaws.com", ""},         // no bucket
		{"sqs.us-east-1.amazonaws.com", "/orders"}, // no account
		{"custom.cluster-custom-abc.eu-west-1.rds.amazonaws.com", ""},
		{"orders.example.com", ""},
		{"amazonaws.com", ""},
		{"a..b.rds.amazonaws.com", ""},
	} {
		_, err := ParseEndpoint(tc[0], tc[1])
		g.Expect(err).To(HaveOccurred(), tc[0])
	}
}

// TestCloudResourcesInConfiguration: the strings a pod spec and its
// ConfigMaps hold name resources by URL, DSN, ARN or bare host; one
// resource named twice is one.
func TestCloudResourcesInConfiguration(t *testing.T) {
	g := NewWithT(t)
	text := `database:
  url: postgres://orders:${PASSWORD}@orders.c9akciq32.eu-west-1.rds.amazonaws.com:5432/orders?sslmode=require
  replica: jdbc:postgresql://orders.c9akciq32.eu-west-1.rds.amazonaws.com:5432/orders
queue: https://sqs.eu-west-1.amazonaws.com/123456789012/order-events
archive: s3://invoices-archive/2026/
cache: "rediss://master.sessions.abc123.euw1.cache.amazonaws.com:6379"
role: arn:aws:iam::123456789012:role/orders
topic: arn:aws:sns:eu-west-1:123456789012:order-alerts
`
	g.Expect(CloudResources(text)).To(Equal([]runlorev1.Workload{
		{Kind: KindRDSInstance, Name: "orders", Region: "eu-west-1"},
		{Kind: KindSQSQueue, Name: "order-events", Account: "123456789012", Region: "eu-west-1"},
		{Kind: KindS3Bucket, Name: "invoices-archive"},
		{Kind: KindCacheReplGroup, Name: "sessions"},
		{Kind: KindSNSTopic, Name: "order-alerts", Account: "123456789012", Region: "eu-west-1"},
	}))
	for _, w := range CloudResources(text) {
		back, err := CloudResourceOfARN(CloudARN(w))
		g.Expect(err).NotTo(HaveOccurred(), CloudARN(w))
		g.Expect(back).To(Equal(w), "a resource's ARN names it back")
	}
	g.Expect(CloudARN(runlorev1.Workload{Kind: KindRDSInstance, Name: "orders", Region: "eu-west-1"})).To(Equal("arn:aws:rds:eu-west-1::db:orders"))
	g.Expect(CloudARN(runlorev1.Workload{Kind: "Deployment", Name: "orders"})).To(BeEmpty())
	g.Expect(ConnectedKinds()).To(ContainElements(KindRDSInstance, KindSQSQueue, KindS3Bucket))
	g.Expect(CloudResources("orders-db.shop.svc.cluster.local:5432")).To(BeEmpty())
	g.Expect(CloudResources("timeout=30s")).To(BeEmpty())
	many := strings.Repeat("https://sqs.eu-west-1.amazonaws.com/1/q", 1) + " "
	for i := range 40 {
		many += "s3://bucket-" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " "
	}
	g.Expect(len(CloudResources(many))).To(BeNumerically("<=", maxCloudResources))
}

// FuzzCloudResources: no text panics the readers, and every resource read
// is a valid cloud identity (an id a Workload may carry).
func FuzzCloudResources(f *testing.F) {
	for _, s := range []string{
		"postgres://u:p@orders.c9akciq32.eu-west-1.rds.amazonaws.com:5432/db",
		"https://sqs.us-east-1.amazonaws.com/123456789012/q", "s3://bucket/key", "arn:aws:s3:::b/k",
		"arn:aws:rds:eu-west-1:1:db:x", "master.a.b.use1.cache.amazonaws.com", "x.s3.amazonaws.com",
		"arn:aws:sqs:::", ".amazonaws.com", "a.-.s3-.amazonaws.com.cn/", "s3.amazonaws.com//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range CloudResources(s) {
			if w.Name == "" || len(w.Name) > maxCloudName || !utf8.ValidString(w.Name) || strings.ContainsAny(w.Name, "/:@ ") {
				t.Fatalf("CloudResources(%q) read an invalid id %+v", s, w)
			}
			if w.Namespace != "" || !strings.Contains(w.Kind, ":") {
				t.Fatalf("CloudResources(%q) read %+v, not a cloud identity", s, w)
			}
			if !Agree(w, w) {
				t.Fatalf("%+v does not agree with itself", w)
			}
			back, err := CloudResourceOfARN(CloudARN(w))
			if err != nil || back.Kind != w.Kind || back.Name != w.Name {
				t.Fatalf("%+v's ARN %q reads back as %+v (%v)", w, CloudARN(w), back, err)
			}
		}
		host, path, _ := strings.Cut(s, "/")
		if w, err := ParseEndpoint(host, "/"+path); err == nil && w.Name == "" {
			t.Fatalf("ParseEndpoint(%q) read an empty id", s)
		}
		if w, err := CloudResourceOfARN(s); err == nil && w.Name == "" {
			t.Fatalf("CloudResourceOfARN(%q) read an empty id", s)
		}
	})
}
