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
	"fmt"
	"regexp"
	"sort"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// The cloud resources a workload's configuration names — the database,
// cache, queue, bucket or broker it connects to — read from the strings a
// pod spec or a ConfigMap holds: an AWS ARN, or an AWS endpoint (a host
// name under amazonaws.com, with the path an SQS queue URL or a
// path-style S3 URL adds), or an s3:// URL. Each reduces to the same
// identity an ARN of the resource does (kind service:type, the bare id as
// name), so two workloads that name one resource, by endpoint or by ARN,
// name the same identity.

// Cloud kinds a workload connects to.
const (
	KindRDSInstance      = "rds:db"
	KindRDSCluster       = "rds:cluster"
	KindRDSProxy         = "rds:db-proxy"
	KindCacheCluster     = "elasticache:cluster"
	KindCacheReplGroup   = "elasticache:replicationgroup"
	KindCacheServerless  = "elasticache:serverlesscache"
	KindMemoryDBCluster  = "memorydb:cluster"
	KindSQSQueue         = "sqs:queue"
	KindSNSTopic         = "sns:topic"
	KindS3Bucket         = "s3:bucket"
	KindDynamoDBTable    = "dynamodb:table"
	KindKinesisStream    = "kinesis:stream"
	KindOpenSearchDomain = "es:domain"
	KindMSKCluster       = "kafka:cluster"
	KindMQBroker         = "mq:broker"
	KindRedshiftCluster  = "redshift:cluster"
)

// arnKinds are, by ARN service, the resource types a workload connects to
// and the kind each is; "" is a service whose ARN names its resource with
// no type (an SQS queue, an SNS topic, an S3 bucket). An ARN of any other
// service or type (an IAM role, a KMS key, a secret) names no resource a
// workload's connections fail on.
var arnKinds = map[string]map[string]string{
	"rds":         {"db": KindRDSInstance, "cluster": KindRDSCluster, "db-proxy": KindRDSProxy},
	"elasticache": {"cluster": KindCacheCluster, "replicationgroup": KindCacheReplGroup, "serverlesscache": KindCacheServerless},
	"memorydb":    {"cluster": KindMemoryDBCluster},
	"sqs":         {"": KindSQSQueue},
	"sns":         {"": KindSNSTopic},
	"s3":          {"": KindS3Bucket},
	"dynamodb":    {"table": KindDynamoDBTable},
	"kinesis":     {"stream": KindKinesisStream},
	"es":          {"domain": KindOpenSearchDomain},
	"kafka":       {"cluster": KindMSKCluster},
	"mq":          {"broker": KindMQBroker},
	"redshift":    {"cluster": KindRedshiftCluster},
}

// arnForms are, by kind, the service, resource type and separator of its
// ARN (arnKinds read backwards).
var arnForms = map[string][3]string{
	KindRDSInstance: {"rds", "db", ":"}, KindRDSCluster: {"rds", "cluster", ":"}, KindRDSProxy: {"rds", "db-proxy", ":"},
	KindCacheCluster: {"elasticache", "cluster", ":"}, KindCacheReplGroup: {"elasticache", "replicationgroup", ":"},
	KindCacheServerless: {"elasticache", "serverlesscache", ":"}, KindMemoryDBCluster: {"memorydb", "cluster", "/"},
	KindSQSQueue: {"sqs"}, KindSNSTopic: {"sns"}, KindS3Bucket: {"s3"},
	KindDynamoDBTable: {"dynamodb", "table", "/"}, KindKinesisStream: {"kinesis", "stream", "/"},
	KindOpenSearchDomain: {"es", "domain", "/"}, KindMSKCluster: {"kafka", "cluster", "/"},
	KindMQBroker: {"mq", "broker", ":"}, KindRedshiftCluster: {"redshift", "cluster", ":"},
}

// ConnectedKinds are the cloud kinds CloudResources reads, sorted.
func ConnectedKinds() []string {
	out := make([]string, 0, len(arnForms))
	for k := range arnForms {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CloudARN is the ARN of a resource of a kind CloudResources reads, with
// the region and account it knows (an S3 bucket's ARN has neither); "" for
// another kind. CloudResourceOfARN reads it back.
func CloudARN(w runlorev1.Workload) string {
	f, ok := arnForms[w.Kind]
	if !ok || w.Name == "" {
		return ""
	}
	resource := w.Name
	if f[1] != "" {
		resource = f[1] + f[2] + w.Name
	}
	region, account := w.Region, w.Account
	if w.Kind == KindS3Bucket {
		region, account = "", ""
	}
	return "arn:aws:" + f[0] + ":" + region + ":" + account + ":" + resource
}

// Bounds of what is read from outside input.
const (
	// maxCloudText is how much of one string is scanned.
	maxCloudText = 64 << 10
	// maxCloudResources bounds the resources one string yields.
	maxCloudResources = 16
	// maxCloudName is the longest id kept (a Workload's name).
	maxCloudName = 253
	maxARNLen    = 2048
)

var (
	// arnRe finds an ARN in a text: partition aws, aws-cn, aws-us-gov…
	arnRe = regexp.MustCompile(`\barn:aws(?:-[a-z-]+)?:[a-z0-9-]+:[a-z0-9-]*:[0-9]*:[A-Za-z0-9_./:+=,@-]+`)
	// endpointRe finds an AWS endpoint host with the port and path that
	// follow it.
	endpointRe = regexp.MustCompile(`(?i)\b([a-z0-9](?:[a-z0-9.-]{0,250}[a-z0-9])?\.amazonaws\.com(?:\.cn)?)(?::[0-9]{1,5})?(/[^\s"'<>,;]*)?`)
	// s3URLRe finds an s3:// (s3a://, s3n://) URL's bucket.
	s3URLRe = regexp.MustCompile(`(?i)\bs3[an]?://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:[/\s"'<>,;]|$)`)
	// cloudID is what a resource id may hold.
	cloudID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// awsRegion is a region's spelling: us-east-1, eu-central-2, us-gov-west-1.
	awsRegion = regexp.MustCompile(`^[a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}$`)
)

// CloudResourceOfARN is the cloud resource an ARN names, when it is one a
// workload connects to: kind and id as arnKinds spells them, account and
// region as the ARN gives them.
func CloudResourceOfARN(arn string) (runlorev1.Workload, error) {
	if len(arn) > maxARNLen {
		return runlorev1.Workload{}, fmt.Errorf("arn: %d bytes, more than %d", len(arn), maxARNLen)
	}
	if _, err := ParseARN(arn); err != nil {
		return runlorev1.Workload{}, err
	}
	parts := strings.SplitN(arn, ":", 6)
	service, region, account, resource := parts[2], parts[3], parts[4], parts[5]
	types, ok := arnKinds[service]
	if !ok {
		return runlorev1.Workload{}, fmt.Errorf("arn %q: service %s is not one a workload connects to", shorten(arn), service)
	}
	typ, id := "", resource
	if kind, ok := types[""]; ok {
		// The resource is the id; an S3 object's key or an SNS
		// subscription follows it.
		id, _, _ = strings.Cut(resource, "/")
		id, _, _ = strings.Cut(id, ":")
		return cloudWorkload(arn, kind, id, account, region)
	}
	if i := strings.IndexAny(resource, ":/"); i >= 0 {
		typ, id = resource[:i], resource[i+1:]
	}
	kind, ok := types[typ]
	if !ok || typ == "" {
		return runlorev1.Workload{}, fmt.Errorf("arn %q: resource type %q of %s is not one a workload connects to", shorten(arn), typ, service)
	}
	// A table's stream, a cluster's uuid, a broker's id follow the name.
	id, _, _ = strings.Cut(id, "/")
	id, _, _ = strings.Cut(id, ":")
	return cloudWorkload(arn, kind, id, account, region)
}

// ParseEndpoint is the cloud resource an AWS endpoint names: host is a
// host name under amazonaws.com (or amazonaws.com.cn), path what follows
// it in a URL (an SQS queue URL's /account/queue, a path-style S3 URL's
// /bucket). An endpoint of a service as a whole (sts, dynamodb, the S3
// endpoint without a bucket) names no resource and is an error.
func ParseEndpoint(host, path string) (runlorev1.Workload, error) {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(h) > 253 {
		return runlorev1.Workload{}, fmt.Errorf("endpoint %q: host name longer than 253", shorten(h))
	}
	rest, ok := strings.CutSuffix(h, ".amazonaws.com")
	if !ok {
		rest, ok = strings.CutSuffix(h, ".amazonaws.com.cn")
	}
	if !ok || rest == "" {
		return runlorev1.Workload{}, fmt.Errorf("endpoint %q: not a host under amazonaws.com", shorten(h))
	}
	l := strings.Split(rest, ".")
	for _, label := range l {
		if label == "" {
			return runlorev1.Workload{}, fmt.Errorf("endpoint %q: empty label", shorten(h))
		}
	}
	bad := func(why string) (runlorev1.Workload, error) {
		return runlorev1.Workload{}, fmt.Errorf("endpoint %q: %s", shorten(h), why)
	}
	n := len(l)
	last := l[n-1]
	switch {
	case n == 4 && (last == "rds" || last == "docdb"):
		// <id>.<hash>.<region>.rds: an instance; cluster-, cluster-ro-
		// and cluster-custom- hashes are a cluster's endpoints, proxy- a
		// proxy's. DocumentDB's endpoints are RDS resources.
		kind := KindRDSInstance
		switch seg := l[1]; {
		case strings.HasPrefix(seg, "cluster-custom-"):
			return bad("a custom cluster endpoint does not name its cluster")
		case strings.HasPrefix(seg, "cluster-"):
			kind = KindRDSCluster
		case strings.HasPrefix(seg, "proxy-"):
			kind = KindRDSProxy
		}
		return cloudWorkload(h, kind, l[0], "", l[2])
	case last == "cache" && n >= 4:
		// ElastiCache's region is a short code (use1), not a region.
		switch {
		case n == 5 && (l[0] == "master" || l[0] == "replica" || l[0] == "clustercfg"):
			return cloudWorkload(h, KindCacheReplGroup, l[1], "", "")
		case n == 4 && l[1] == "serverless":
			name := l[0]
			if i := strings.LastIndexByte(name, '-'); i > 0 {
				name = name[:i]
			}
			return cloudWorkload(h, KindCacheServerless, name, "", "")
		case n == 5:
			// <cluster>.<hash>.<node or cfg>.<code>.cache
			return cloudWorkload(h, KindCacheCluster, l[0], "", "")
		}
		return bad("not an ElastiCache endpoint")
	case n == 5 && l[3] == "memorydb" && l[0] == "clustercfg":
		return cloudWorkload(h, KindMemoryDBCluster, l[1], "", l[4])
	case n == 2 && l[0] == "sqs", n == 2 && last == "queue", n == 1 && last == "queue":
		// sqs.<region>, <region>.queue, queue (legacy): the queue is the
		// path's /<account>/<queue>.
		region := l[0]
		if l[0] == "sqs" {
			region = l[1]
		} else if n == 1 {
			region = ""
		}
		parts := strings.Split(strings.Trim(path, "/"), "/")
		if len(parts) < 2 || !allDigits(parts[0]) {
			return bad("an SQS endpoint names its queue by the path /<account>/<queue>")
		}
		return cloudWorkload(h, KindSQSQueue, parts[1], parts[0], region)
	case n == 3 && last == "es":
		// vpc-<domain>-<hash>.<region>.es, search-<domain>-<hash>.<region>.es
		name, ok := strings.CutPrefix(l[0], "vpc-")
		if !ok {
			name = strings.TrimPrefix(name, "search-")
		}
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		return cloudWorkload(h, KindOpenSearchDomain, name, "", l[1])
	case n >= 5 && l[n-2] == "kafka" && strings.HasPrefix(l[0], "b-"):
		// b-1.<cluster>.<hash>.c2.kafka.<region>
		return cloudWorkload(h, KindMSKCluster, l[1], "", last)
	case n == 4 && last == "redshift":
		return cloudWorkload(h, KindRedshiftCluster, l[0], "", l[2])
	case n == 3 && l[1] == "mq" && strings.HasPrefix(l[0], "b-"):
		// b-<uuid>-<n>.mq.<region>: the broker's id.
		id := l[0]
		if i := strings.LastIndexByte(id, '-'); i > 2 {
			id = id[:i]
		}
		return cloudWorkload(h, KindMQBroker, id, "", l[2])
	}
	return s3Endpoint(h, l, path)
}

// s3Endpoint reads an S3 endpoint: virtual-hosted (<bucket>.s3.<region>,
// <bucket>.s3-<region>, <bucket>.s3, a website or dual-stack endpoint) or
// path-style (s3.<region> with /<bucket> in the path).
func s3Endpoint(h string, l []string, path string) (runlorev1.Workload, error) {
	at := -1
	for i, label := range l {
		if label == "s3" || strings.HasPrefix(label, "s3-") {
			at = i
			break
		}
	}
	if at < 0 || strings.HasPrefix(l[at], "s3-accesspoint") || strings.HasPrefix(l[at], "s3-control") {
		return runlorev1.Workload{}, fmt.Errorf("endpoint %q: names no resource a workload connects to", shorten(h))
	}
	region := ""
	for _, label := range l[at:] {
		r := strings.TrimPrefix(strings.TrimPrefix(label, "s3-website-"), "s3-")
		if awsRegion.MatchString(r) {
			region = r
			break
		}
	}
	bucket := strings.Join(l[:at], ".")
	if at == 0 {
		bucket, _, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/")
		bucket, _, _ = strings.Cut(bucket, "?")
	}
	if bucket == "" {
		return runlorev1.Workload{}, fmt.Errorf("endpoint %q: the S3 endpoint without a bucket", shorten(h))
	}
	return cloudWorkload(h, KindS3Bucket, strings.ToLower(bucket), "", region)
}

// cloudWorkload checks an id read from what source says and makes the
// identity.
func cloudWorkload(source, kind, id, account, region string) (runlorev1.Workload, error) {
	switch {
	case id == "":
		return runlorev1.Workload{}, fmt.Errorf("%q: empty resource id", shorten(source))
	case len(id) > maxCloudName:
		return runlorev1.Workload{}, fmt.Errorf("%q: resource id longer than %d", shorten(source), maxCloudName)
	case !cloudID.MatchString(id):
		return runlorev1.Workload{}, fmt.Errorf("%q: resource id %q has characters no resource id has", shorten(source), shorten(id))
	case len(account) > 64 || !allDigits(account) && account != "":
		return runlorev1.Workload{}, fmt.Errorf("%q: account %q is not an account id", shorten(source), shorten(account))
	case len(region) > 64:
		return runlorev1.Workload{}, fmt.Errorf("%q: region longer than 64", shorten(source))
	}
	return runlorev1.Workload{Kind: kind, Name: id, Account: account, Region: region}, nil
}

// CloudResources are the cloud resources a text names (an env value, a
// ConfigMap value, an argument), in the order it names them, each once
// (by kind and id), bounded. What does not parse is left out: a text
// names a resource or does not.
func CloudResources(text string) []runlorev1.Workload {
	if len(text) > maxCloudText {
		text = text[:maxCloudText]
	}
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "arn:aws") && !strings.Contains(lower, "amazonaws.com") && !strings.Contains(lower, "s3") {
		return nil
	}
	type hit struct {
		at int
		w  runlorev1.Workload
	}
	var hits []hit
	for _, m := range arnRe.FindAllStringIndex(text, maxCloudResources) {
		if w, err := CloudResourceOfARN(text[m[0]:m[1]]); err == nil {
			hits = append(hits, hit{m[0], w})
		}
	}
	for _, m := range endpointRe.FindAllStringSubmatchIndex(text, maxCloudResources) {
		path := ""
		if m[4] >= 0 {
			path = text[m[4]:m[5]]
		}
		if w, err := ParseEndpoint(text[m[2]:m[3]], path); err == nil {
			hits = append(hits, hit{m[0], w})
		}
	}
	for _, m := range s3URLRe.FindAllStringSubmatchIndex(text, maxCloudResources) {
		if w, err := cloudWorkload(text[m[2]:m[3]], KindS3Bucket, strings.ToLower(text[m[2]:m[3]]), "", ""); err == nil {
			hits = append(hits, hit{m[0], w})
		}
	}
	// In the order the text names them.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	seen := map[string]bool{}
	var out []runlorev1.Workload
	for _, h := range hits {
		key := h.w.Kind + "/" + h.w.Name
		if seen[key] || len(out) >= maxCloudResources {
			continue
		}
		seen[key] = true
		out = append(out, h.w)
	}
	return out
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
