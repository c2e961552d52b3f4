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

// Package aws puts AWS infrastructure changes on the same timeline as git
// diffs: CloudTrail LookupEvents over the incident window, mutating calls
// only, mapped to Changes with the resources they touched. It also reads the
// health of EC2 instances, Auto Scaling groups, EKS node groups and RDS
// instances for the cloud_resource_health tool. Credentials come
// from the SDK's default chain (IRSA or EKS Pod Identity in a cluster); this
// package must never take static keys from configuration, never call a
// mutating AWS API, and never copy request parameters (which can carry
// secrets) into a Change.
package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudtrail"
	"github.com/aws/aws-sdk-go-v2/service/cloudtrail/types"
	"github.com/aws/smithy-go"

	"github.com/runlore/runlore/pkg/whatchanged"
)

// LookupEventsAPI is the one CloudTrail call this package makes.
type LookupEventsAPI interface {
	LookupEvents(ctx context.Context, in *cloudtrail.LookupEventsInput, optFns ...func(*cloudtrail.Options)) (*cloudtrail.LookupEventsOutput, error)
}

// DefaultMaxEvents bounds how many events one collection reads.
const DefaultMaxEvents = 200

// Collector reads CloudTrail's management events.
type Collector struct {
	API LookupEventsAPI
	// MaxEvents bounds the events read; zero means DefaultMaxEvents.
	MaxEvents int
	// Resource, when set, restricts the lookup to one resource name or ARN.
	Resource string
}

// New builds a Collector from the default credential chain. optFns are
// passed to config.LoadDefaultConfig (tests point the endpoint at a local
// server with config.WithBaseEndpoint).
func New(ctx context.Context, optFns ...func(*config.LoadOptions) error) (*Collector, error) {
	cfg, err := config.LoadDefaultConfig(ctx, optFns...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("aws region: not set (AWS_REGION, or the region of the cluster's IRSA/Pod Identity configuration)")
	}
	return &Collector{API: cloudtrail.NewFromConfig(cfg)}, nil
}

// Name implements whatchanged.Collector.
func (c *Collector) Name() string { return "aws" }

// Collect implements whatchanged.Collector. On a throttle or a rejected
// credential it returns the events read so far and an error that says what
// to do; the timeline keeps going without AWS.
func (c *Collector) Collect(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	limit := c.MaxEvents
	if limit <= 0 {
		limit = DefaultMaxEvents
	}
	in := &cloudtrail.LookupEventsInput{
		StartTime:  awssdk.Time(q.From),
		EndTime:    awssdk.Time(q.To),
		MaxResults: awssdk.Int32(50),
	}
	// CloudTrail takes one lookup attribute per call: filter on the resource
	// when asked, else on ReadOnly=false; read-only events are dropped below
	// either way.
	if c.Resource != "" {
		in.LookupAttributes = []types.LookupAttribute{{AttributeKey: types.LookupAttributeKeyResourceName, AttributeValue: awssdk.String(c.Resource)}}
	} else {
		in.LookupAttributes = []types.LookupAttribute{{AttributeKey: types.LookupAttributeKeyReadOnly, AttributeValue: awssdk.String("false")}}
	}
	var out []whatchanged.Change
	read := 0
	for {
		page, err := c.API.LookupEvents(ctx, in)
		if err != nil {
			return out, Explain(err)
		}
		for _, ev := range page.Events {
			read++
			if ch, ok := changeOf(ev, q.Incident); ok {
				out = append(out, ch)
			}
		}
		if page.NextToken == nil || *page.NextToken == "" || read >= limit {
			if page.NextToken != nil && *page.NextToken != "" {
				return out, fmt.Errorf("cloudtrail: stopped after %d events; narrow the window or name a resource", read)
			}
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// readOnlyPrefixes guard against events CloudTrail does not flag read-only.
var readOnlyPrefixes = []string{"Describe", "Get", "List", "Lookup", "Head", "Search", "BatchGet", "Scan", "Query"}

// IsMutating reports whether an event changed something.
func IsMutating(ev types.Event) bool {
	if ev.ReadOnly != nil && strings.EqualFold(*ev.ReadOnly, "true") {
		return false
	}
	name := awssdk.ToString(ev.EventName)
	for _, p := range readOnlyPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return name != ""
}

// trailRecord is the part of CloudTrailEvent this package reads; request
// and response parameters are deliberately not decoded.
type trailRecord struct {
	AWSRegion    string `json:"awsRegion"`
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
	Account      string `json:"recipientAccountId"`
	Resources    []struct {
		ARN  string `json:"ARN"`
		Type string `json:"type"`
	} `json:"resources"`
	UserIdentity struct {
		ARN string `json:"arn"`
	} `json:"userIdentity"`
}

func changeOf(ev types.Event, inc whatchanged.Incident) (whatchanged.Change, bool) {
	if !IsMutating(ev) || ev.EventTime == nil {
		return whatchanged.Change{}, false
	}
	var rec trailRecord
	if ev.CloudTrailEvent != nil {
		_ = json.Unmarshal([]byte(*ev.CloudTrailEvent), &rec) // best effort: the record is optional detail
	}
	service := strings.TrimSuffix(awssdk.ToString(ev.EventSource), ".amazonaws.com")
	name := awssdk.ToString(ev.EventName)
	ch := whatchanged.Change{
		Source:  whatchanged.SourceAWS,
		At:      ev.EventTime.UTC(),
		Author:  awssdk.ToString(ev.Username),
		Summary: service + ":" + name,
	}
	if ch.Author == "" {
		ch.Author = rec.UserIdentity.ARN
	}
	for _, r := range rec.Resources {
		if r.ARN != "" {
			ch.Objects = append(ch.Objects, whatchanged.ObjectRef{Kind: r.Type, Name: r.ARN})
		}
	}
	for _, r := range ev.Resources {
		ref := whatchanged.ObjectRef{Kind: awssdk.ToString(r.ResourceType), Name: awssdk.ToString(r.ResourceName)}
		if ref.Name != "" && !hasName(ch.Objects, ref.Name) {
			ch.Objects = append(ch.Objects, ref)
		}
	}
	if len(ch.Objects) > 0 {
		ch.Object = ch.Objects[0]
		ch.Summary += " on " + ch.Object.Name
	} else {
		ch.Object = whatchanged.ObjectRef{Kind: service, Name: name}
	}
	// A cloud incident names its resource by bare id; tie the change to it
	// when one of the touched resources is that id or ends in it.
	if inc.Namespace == "" && inc.Name != "" {
		for _, o := range ch.Objects {
			if o.Name == inc.Name || strings.HasSuffix(o.Name, "/"+inc.Name) || strings.HasSuffix(o.Name, ":"+inc.Name) {
				ch.Objects = append(ch.Objects, whatchanged.ObjectRef{Kind: inc.Kind, Name: inc.Name})
				break
			}
		}
	}
	if ch.Author != "" {
		ch.Summary += " by " + ch.Author
	}
	if rec.ErrorCode != "" {
		ch.Note = "the call failed (" + rec.ErrorCode + "), so it likely changed nothing"
	}
	var detail []string
	if rec.AWSRegion != "" {
		detail = append(detail, "region "+rec.AWSRegion)
	}
	if rec.Account != "" {
		detail = append(detail, "account "+rec.Account)
	}
	if id := awssdk.ToString(ev.EventId); id != "" {
		detail = append(detail, "event "+id)
	}
	ch.Message = strings.Join(detail, ", ")
	return ch, true
}

func hasName(refs []whatchanged.ObjectRef, name string) bool {
	for _, r := range refs {
		if r.Name == name || strings.HasSuffix(r.Name, "/"+name) {
			return true
		}
	}
	return false
}

// ErrThrottled, ErrCredentials and ErrNotFound classify AWS call failures.
var (
	ErrThrottled   = errors.New("aws throttled the call")
	ErrCredentials = errors.New("aws credentials were rejected")
	ErrNotFound    = errors.New("aws resource not found")
)

// Explain turns a CloudTrail SDK error into one that says what happened and
// what to do, wrapping ErrThrottled or ErrCredentials when it is one of those.
func Explain(err error) error {
	return explain(call{
		what:       "cloudtrail lookup",
		permission: "cloudtrail:LookupEvents",
		throttled:  "CloudTrail allows about two lookups a second per account; retry later or narrow the window",
	}, err)
}

// call names one AWS API call for explain.
type call struct {
	// what prefixes an unclassified failure, such as "cloudtrail lookup".
	what string
	// permission is the IAM action the call needs.
	permission string
	// throttled is the advice given when the call was rate-limited.
	throttled string
}

var (
	throttleCodes   = []string{"ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded", "Throttling", "ThrottledException", "RequestThrottled"}
	credentialCodes = []string{"UnrecognizedClientException", "InvalidClientTokenId", "ExpiredTokenException", "ExpiredToken",
		"InvalidSignatureException", "SignatureDoesNotMatch", "AccessDeniedException", "AccessDenied", "AuthFailure", "UnauthorizedOperation"}
	notFoundCodes = []string{"ResourceNotFoundException", "DBInstanceNotFound", "DBInstanceNotFoundFault",
		"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"}
)

func codeIn(code string, codes []string) bool {
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}

func explain(c call, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		switch {
		case codeIn(code, throttleCodes):
			return fmt.Errorf("%w (%s): %s", ErrThrottled, code, c.throttled)
		case codeIn(code, credentialCodes):
			return fmt.Errorf("%w (%s): check the service account's IRSA role or Pod Identity association and that it allows %s", ErrCredentials, code, c.permission)
		case codeIn(code, notFoundCodes):
			return fmt.Errorf("%w (%s): %s", ErrNotFound, code, api.ErrorMessage())
		}
		return fmt.Errorf("%s: %s: %s", c.what, code, api.ErrorMessage())
	}
	if strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role found") {
		return fmt.Errorf("%w: no credentials found in the default chain (IRSA, Pod Identity, environment)", ErrCredentials)
	}
	return fmt.Errorf("%s: %w", c.what, err)
}

// Window is a convenience for tools: the Query for the last d before now.
func Window(d time.Duration, now time.Time) whatchanged.Query {
	return whatchanged.Query{From: now.Add(-d), To: now, Incident: whatchanged.Incident{Start: now}}
}
