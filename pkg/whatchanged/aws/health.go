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
	"fmt"
	"sort"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	rdstypes "github.com/aws/aws-sdk-go-v2/service/rds/types"

	"github.com/runlore/runlore/pkg/textutil"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// EC2API is the read-only EC2 calls the health checker makes.
type EC2API interface {
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	DescribeInstanceStatus(ctx context.Context, in *ec2.DescribeInstanceStatusInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error)
}

// AutoScalingAPI is the read-only Auto Scaling calls the health checker makes.
type AutoScalingAPI interface {
	DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
	DescribeScalingActivities(ctx context.Context, in *autoscaling.DescribeScalingActivitiesInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeScalingActivitiesOutput, error)
}

// EKSAPI is the read-only EKS call the health checker makes.
type EKSAPI interface {
	DescribeNodegroup(ctx context.Context, in *eks.DescribeNodegroupInput, optFns ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error)
}

// RDSAPI is the read-only RDS calls the health checker makes.
type RDSAPI interface {
	DescribeDBInstances(ctx context.Context, in *rds.DescribeDBInstancesInput, optFns ...func(*rds.Options)) (*rds.DescribeDBInstancesOutput, error)
	DescribeEvents(ctx context.Context, in *rds.DescribeEventsInput, optFns ...func(*rds.Options)) (*rds.DescribeEventsOutput, error)
}

// DefaultMaxHealthItems bounds the members, problems and events one health
// answer carries.
const DefaultMaxHealthItems = 20

// rdsEventWindow is how far back RDS events are read.
const rdsEventWindow = 24 * time.Hour

// HealthChecker reads the health of EC2 instances, Auto Scaling groups, EKS
// managed node groups and RDS DB instances. It implements
// whatchanged.CloudHealthChecker and makes Describe calls only.
type HealthChecker struct {
	EC2         EC2API
	AutoScaling AutoScalingAPI
	EKS         EKSAPI
	RDS         RDSAPI
	// MaxItems bounds members, problems and events; zero means
	// DefaultMaxHealthItems.
	MaxItems int
	// Now is the clock for the RDS event window; nil means time.Now.
	Now func() time.Time
}

// NewHealthChecker builds a HealthChecker from the default credential
// chain. optFns are passed to config.LoadDefaultConfig (tests point the
// endpoint at a local server with config.WithBaseEndpoint). Each call is
// made in the region the ARN names, so no default region is required.
func NewHealthChecker(ctx context.Context, optFns ...func(*config.LoadOptions) error) (*HealthChecker, error) {
	cfg, err := config.LoadDefaultConfig(ctx, optFns...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return &HealthChecker{
		EC2:         ec2.NewFromConfig(cfg),
		AutoScaling: autoscaling.NewFromConfig(cfg),
		EKS:         eks.NewFromConfig(cfg),
		RDS:         rds.NewFromConfig(cfg),
	}, nil
}

// Resource kinds the health checker reads.
const (
	KindEC2Instance   = "ec2:instance"
	KindAutoScaling   = "autoscaling:group"
	KindEKSNodegroup  = "eks:nodegroup"
	KindRDSDBInstance = "rds:db"
)

// Resource is a parsed resource ARN.
type Resource struct {
	ARN    string
	Kind   string
	Region string
	// Name is the instance id, group name, node group name or DB identifier.
	Name string
	// Cluster is the EKS cluster of a node group.
	Cluster string
}

const arnForms = "want arn:aws:ec2:<region>:<account>:instance/<id>, " +
	"arn:aws:autoscaling:<region>:<account>:autoScalingGroup:<uuid>:autoScalingGroupName/<name>, " +
	"arn:aws:eks:<region>:<account>:nodegroup/<cluster>/<nodegroup>/<uuid> or arn:aws:rds:<region>:<account>:db:<id>"

// maxARNBytes is far above any real ARN; longer input is refused unread.
const maxARNBytes = 2048

// ParseResourceARN reads an ARN of a resource kind the health checker
// knows. Errors wrap whatchanged.ErrInvalidResource and name the field.
func ParseResourceARN(s string) (Resource, error) {
	bad := func(why string) (Resource, error) {
		shown := textutil.Truncate(s, 120)
		return Resource{}, fmt.Errorf("%w: arn %q: %s; %s", whatchanged.ErrInvalidResource, shown, why, arnForms)
	}
	if len(s) > maxARNBytes {
		return bad("too long")
	}
	a, err := arn.Parse(s)
	if err != nil {
		return bad("not an ARN")
	}
	if a.Region == "" {
		return bad("no region")
	}
	r := Resource{ARN: s, Region: a.Region}
	switch a.Service {
	case "ec2":
		id, ok := strings.CutPrefix(a.Resource, "instance/")
		if !ok || !strings.HasPrefix(id, "i-") || strings.ContainsAny(id, "/: ") {
			return bad("an EC2 ARN must name an instance/i-<id>")
		}
		r.Kind, r.Name = KindEC2Instance, id
	case "autoscaling":
		_, name, ok := strings.Cut(a.Resource, ":autoScalingGroupName/")
		if !ok || !strings.HasPrefix(a.Resource, "autoScalingGroup:") || name == "" {
			return bad("an Auto Scaling ARN must name an autoScalingGroup:<uuid>:autoScalingGroupName/<name>")
		}
		r.Kind, r.Name = KindAutoScaling, name
	case "eks":
		parts := strings.Split(a.Resource, "/")
		if len(parts) < 3 || len(parts) > 4 || parts[0] != "nodegroup" || parts[1] == "" || parts[2] == "" {
			return bad("an EKS ARN must name a nodegroup/<cluster>/<nodegroup>/<uuid>")
		}
		r.Kind, r.Cluster, r.Name = KindEKSNodegroup, parts[1], parts[2]
	case "rds":
		id, ok := strings.CutPrefix(a.Resource, "db:")
		if !ok || id == "" || strings.ContainsAny(id, "/: ") {
			return bad("an RDS ARN must name a db:<identifier>")
		}
		r.Kind, r.Name = KindRDSDBInstance, id
	default:
		return bad("service " + a.Service + " is not one of ec2, autoscaling, eks, rds")
	}
	return r, nil
}

// Health implements whatchanged.CloudHealthChecker. On a cloud failure it
// returns what was read before it and an error that says what to do.
func (h *HealthChecker) Health(ctx context.Context, resourceARN string) (whatchanged.CloudHealth, error) {
	r, err := ParseResourceARN(resourceARN)
	if err != nil {
		return whatchanged.CloudHealth{}, err
	}
	out := whatchanged.CloudHealth{ARN: r.ARN, Kind: r.Kind, Name: r.Name, Region: r.Region, Status: whatchanged.HealthUnknown}
	b := &bounded{max: h.MaxItems, h: &out}
	if b.max <= 0 {
		b.max = DefaultMaxHealthItems
	}
	switch r.Kind {
	case KindEC2Instance:
		err = h.ec2Instance(ctx, r, b)
	case KindAutoScaling:
		err = h.autoScalingGroup(ctx, r, b)
	case KindEKSNodegroup:
		err = h.eksNodegroup(ctx, r, b)
	case KindRDSDBInstance:
		err = h.rdsInstance(ctx, r, b)
	}
	return out, err
}

// bounded appends to a CloudHealth within the item bound, counting what it
// leaves out.
type bounded struct {
	max int
	h   *whatchanged.CloudHealth
}

func (b *bounded) problem(format string, args ...any) {
	if len(b.h.Problems) >= b.max {
		b.h.Omitted++
		return
	}
	b.h.Problems = append(b.h.Problems, fmt.Sprintf(format, args...))
}

func (b *bounded) fact(format string, args ...any) {
	b.h.Facts = append(b.h.Facts, fmt.Sprintf(format, args...))
}

func (b *bounded) member(m whatchanged.CloudHealthMember) {
	if len(b.h.Members) >= b.max {
		b.h.Omitted++
		return
	}
	b.h.Members = append(b.h.Members, m)
}

func (b *bounded) event(e whatchanged.CloudHealthEvent) {
	if len(b.h.Events) >= b.max {
		b.h.Omitted++
		return
	}
	b.h.Events = append(b.h.Events, e)
}

// worsen lowers the verdict to s if s is worse; unknown counts as better
// than degraded so a known problem is never hidden behind it.
func (b *bounded) worsen(s whatchanged.HealthStatus) {
	rank := map[whatchanged.HealthStatus]int{whatchanged.HealthHealthy: 0, whatchanged.HealthUnknown: 1, whatchanged.HealthDegraded: 2, whatchanged.HealthUnhealthy: 3}
	if rank[s] > rank[b.h.Status] {
		b.h.Status = s
	}
}

func ec2Region(region string) func(*ec2.Options) { return func(o *ec2.Options) { o.Region = region } }
func asgRegion(region string) func(*autoscaling.Options) {
	return func(o *autoscaling.Options) { o.Region = region }
}
func eksRegion(region string) func(*eks.Options) { return func(o *eks.Options) { o.Region = region } }
func rdsRegion(region string) func(*rds.Options) { return func(o *rds.Options) { o.Region = region } }

func notConfigured(service string) error {
	return fmt.Errorf("%s health: no %s client configured", service, service)
}

func (h *HealthChecker) ec2Instance(ctx context.Context, r Resource, b *bounded) error {
	if h.EC2 == nil {
		return notConfigured("ec2")
	}
	di, err := h.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{r.Name}}, ec2Region(r.Region))
	if err != nil {
		return explain(call{what: "ec2 describe instances", permission: "ec2:DescribeInstances", throttled: "EC2 rate-limits Describe calls per account; retry in a minute"}, err)
	}
	var inst *ec2types.Instance
	for i := range di.Reservations {
		for j := range di.Reservations[i].Instances {
			if awssdk.ToString(di.Reservations[i].Instances[j].InstanceId) == r.Name {
				inst = &di.Reservations[i].Instances[j]
			}
		}
	}
	if inst == nil {
		return fmt.Errorf("%w: EC2 instance %s in %s", ErrNotFound, r.Name, r.Region)
	}
	var state ec2types.InstanceStateName
	if inst.State != nil {
		state = inst.State.Name
	}
	b.h.State = string(state)
	switch state {
	case ec2types.InstanceStateNameRunning:
		b.h.Status = whatchanged.HealthHealthy
	case ec2types.InstanceStateNamePending:
		b.worsen(whatchanged.HealthDegraded)
		b.problem("instance is starting (pending)")
	case ec2types.InstanceStateNameStopping, ec2types.InstanceStateNameStopped,
		ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated:
		b.worsen(whatchanged.HealthUnhealthy)
		why := ""
		if inst.StateReason != nil && inst.StateReason.Message != nil {
			why = ": " + *inst.StateReason.Message
		} else if inst.StateTransitionReason != nil && *inst.StateTransitionReason != "" {
			why = ": " + *inst.StateTransitionReason
		}
		b.problem("instance is %s%s", state, why)
	}
	b.fact("type %s", inst.InstanceType)
	if inst.Placement != nil && inst.Placement.AvailabilityZone != nil {
		b.fact("zone %s", *inst.Placement.AvailabilityZone)
	}
	if inst.LaunchTime != nil {
		b.fact("launched %s", inst.LaunchTime.UTC().Format(time.RFC3339))
	}
	for _, t := range inst.Tags {
		switch awssdk.ToString(t.Key) {
		case "Name", "aws:autoscaling:groupName", "eks:nodegroup-name", "eks:cluster-name":
			b.fact("tag %s=%s", awssdk.ToString(t.Key), awssdk.ToString(t.Value))
		}
	}

	st, err := h.EC2.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{r.Name}, IncludeAllInstances: awssdk.Bool(true)}, ec2Region(r.Region))
	if err != nil {
		b.worsen(whatchanged.HealthUnknown)
		return explain(call{what: "ec2 describe instance status", permission: "ec2:DescribeInstanceStatus", throttled: "EC2 rate-limits Describe calls per account; retry in a minute"}, err)
	}
	for _, s := range st.InstanceStatuses {
		if awssdk.ToString(s.InstanceId) != r.Name {
			continue
		}
		statusCheck(b, "system status check", s.SystemStatus)
		statusCheck(b, "instance status check", s.InstanceStatus)
		if s.AttachedEbsStatus != nil {
			switch s.AttachedEbsStatus.Status {
			case ec2types.SummaryStatusImpaired:
				b.worsen(whatchanged.HealthUnhealthy)
				b.problem("attached EBS status check impaired")
			case ec2types.SummaryStatusInitializing, ec2types.SummaryStatusInsufficientData:
				b.worsen(whatchanged.HealthDegraded)
				b.problem("attached EBS status check %s", s.AttachedEbsStatus.Status)
			}
		}
		for _, e := range s.Events {
			desc := awssdk.ToString(e.Description)
			ev := whatchanged.CloudHealthEvent{Code: string(e.Code), Message: desc}
			if e.NotBefore != nil {
				ev.At = e.NotBefore.UTC()
			}
			b.event(ev)
			// Completed and canceled events stay listed with these prefixes.
			if strings.HasPrefix(desc, "[Completed]") || strings.HasPrefix(desc, "[Canceled]") {
				continue
			}
			b.worsen(whatchanged.HealthDegraded)
			when := ""
			if e.NotBefore != nil {
				when = " not before " + e.NotBefore.UTC().Format(time.RFC3339)
			}
			b.problem("scheduled %s%s: %s", e.Code, when, desc)
		}
	}
	return nil
}

// statusCheck folds one EC2 status-check summary into the verdict.
func statusCheck(b *bounded, name string, s *ec2types.InstanceStatusSummary) {
	if s == nil {
		return
	}
	switch s.Status {
	case ec2types.SummaryStatusImpaired:
		b.worsen(whatchanged.HealthUnhealthy)
		var failed []string
		for _, d := range s.Details {
			if d.Status == ec2types.StatusTypeFailed {
				f := string(d.Name) + " failed"
				if d.ImpairedSince != nil {
					f += " since " + d.ImpairedSince.UTC().Format(time.RFC3339)
				}
				failed = append(failed, f)
			}
		}
		msg := name + " impaired"
		if len(failed) > 0 {
			msg += " (" + strings.Join(failed, ", ") + ")"
		}
		b.problem("%s", msg)
	case ec2types.SummaryStatusInitializing, ec2types.SummaryStatusInsufficientData:
		b.worsen(whatchanged.HealthDegraded)
		b.problem("%s %s", name, s.Status)
	}
}

func (h *HealthChecker) autoScalingGroup(ctx context.Context, r Resource, b *bounded) error {
	if h.AutoScaling == nil {
		return notConfigured("autoscaling")
	}
	throttled := "Auto Scaling rate-limits Describe calls per account; retry in a minute"
	out, err := h.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{r.Name}}, asgRegion(r.Region))
	if err != nil {
		return explain(call{what: "autoscaling describe groups", permission: "autoscaling:DescribeAutoScalingGroups", throttled: throttled}, err)
	}
	idx := -1
	for i := range out.AutoScalingGroups {
		if awssdk.ToString(out.AutoScalingGroups[i].AutoScalingGroupName) == r.Name {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("%w: Auto Scaling group %s in %s", ErrNotFound, r.Name, r.Region)
	}
	grp := out.AutoScalingGroups[idx]
	desired := awssdk.ToInt32(grp.DesiredCapacity)
	b.h.Status = whatchanged.HealthHealthy
	b.h.State = "Active"
	if grp.Status != nil && *grp.Status != "" {
		b.h.State = *grp.Status
		b.worsen(whatchanged.HealthDegraded)
		b.problem("group status: %s", *grp.Status)
	}
	b.fact("capacity desired %d, min %d, max %d", desired, awssdk.ToInt32(grp.MinSize), awssdk.ToInt32(grp.MaxSize))
	if grp.HealthCheckType != nil {
		b.fact("health check %s, grace %ds", *grp.HealthCheckType, awssdk.ToInt32(grp.HealthCheckGracePeriod))
	}
	if len(grp.AvailabilityZones) > 0 {
		b.fact("zones %s", strings.Join(grp.AvailabilityZones, ", "))
	}
	if lt := grp.LaunchTemplate; lt != nil {
		b.fact("launch template %s version %s", awssdk.ToString(lt.LaunchTemplateName), awssdk.ToString(lt.Version))
	}
	var healthy int32
	var notReady []string
	for _, in := range grp.Instances {
		m := whatchanged.CloudHealthMember{ID: awssdk.ToString(in.InstanceId), Zone: awssdk.ToString(in.AvailabilityZone), State: string(in.LifecycleState), Health: awssdk.ToString(in.HealthStatus)}
		b.member(m)
		if m.State == "InService" && m.Health == "Healthy" {
			healthy++
		} else {
			notReady = append(notReady, fmt.Sprintf("%s (%s, %s)", m.ID, m.State, m.Health))
		}
	}
	if healthy < desired {
		b.worsen(whatchanged.HealthDegraded)
		if healthy == 0 {
			b.worsen(whatchanged.HealthUnhealthy)
		}
		b.problem("%d of %d desired instances InService and Healthy", healthy, desired)
	}
	if len(notReady) > 0 {
		b.problem("not in service or unhealthy: %s", listBounded(notReady, 5))
	}
	for _, p := range grp.SuspendedProcesses {
		b.worsen(whatchanged.HealthDegraded)
		b.problem("process %s suspended: %s", awssdk.ToString(p.ProcessName), awssdk.ToString(p.SuspensionReason))
	}

	acts, err := h.AutoScaling.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: awssdk.String(r.Name), MaxRecords: awssdk.Int32(10)}, asgRegion(r.Region))
	if err != nil {
		return explain(call{what: "autoscaling describe scaling activities", permission: "autoscaling:DescribeScalingActivities", throttled: throttled}, err)
	}
	// Activities come newest first; a failure in the newest means the group
	// cannot currently reach its desired capacity.
	for i, a := range acts.Activities {
		ev := whatchanged.CloudHealthEvent{Code: string(a.StatusCode), Message: awssdk.ToString(a.Description)}
		if a.StartTime != nil {
			ev.At = a.StartTime.UTC()
		}
		if msg := awssdk.ToString(a.StatusMessage); msg != "" && !strings.Contains(ev.Message, msg) {
			ev.Message += ": " + msg
		}
		b.event(ev)
		if a.StatusCode == "Failed" || a.StatusCode == "Cancelled" {
			if i == 0 {
				b.worsen(whatchanged.HealthDegraded)
			}
			b.problem("scaling activity %s at %s: %s", strings.ToLower(string(a.StatusCode)), ev.At.Format(time.RFC3339), awssdk.ToString(a.StatusMessage))
		}
	}
	return nil
}

func listBounded(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

func (h *HealthChecker) eksNodegroup(ctx context.Context, r Resource, b *bounded) error {
	if h.EKS == nil {
		return notConfigured("eks")
	}
	out, err := h.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: awssdk.String(r.Cluster), NodegroupName: awssdk.String(r.Name)}, eksRegion(r.Region))
	if err != nil {
		return explain(call{what: "eks describe nodegroup", permission: "eks:DescribeNodegroup", throttled: "EKS rate-limits Describe calls per account; retry in a minute"}, err)
	}
	ng := out.Nodegroup
	if ng == nil {
		return fmt.Errorf("%w: EKS node group %s/%s in %s", ErrNotFound, r.Cluster, r.Name, r.Region)
	}
	b.h.State = string(ng.Status)
	switch ng.Status {
	case ekstypes.NodegroupStatusActive:
		b.h.Status = whatchanged.HealthHealthy
	case ekstypes.NodegroupStatusCreating, ekstypes.NodegroupStatusUpdating, ekstypes.NodegroupStatusDeleting:
		b.worsen(whatchanged.HealthDegraded)
		b.problem("node group is %s", strings.ToLower(string(ng.Status)))
	case ekstypes.NodegroupStatusDegraded, ekstypes.NodegroupStatusCreateFailed, ekstypes.NodegroupStatusDeleteFailed:
		b.worsen(whatchanged.HealthUnhealthy)
	}
	if ng.Health != nil {
		for _, is := range ng.Health.Issues {
			b.worsen(whatchanged.HealthDegraded)
			msg := fmt.Sprintf("%s: %s", is.Code, awssdk.ToString(is.Message))
			if len(is.ResourceIds) > 0 {
				msg += " (" + listBounded(is.ResourceIds, 5) + ")"
			}
			b.problem("%s", msg)
		}
	}
	b.fact("cluster %s", r.Cluster)
	if sc := ng.ScalingConfig; sc != nil {
		b.fact("scaling desired %d, min %d, max %d", awssdk.ToInt32(sc.DesiredSize), awssdk.ToInt32(sc.MinSize), awssdk.ToInt32(sc.MaxSize))
	}
	if len(ng.InstanceTypes) > 0 {
		b.fact("instance types %s (%s)", strings.Join(ng.InstanceTypes, ", "), ng.CapacityType)
	}
	if ng.Version != nil {
		b.fact("kubernetes %s, release %s", *ng.Version, awssdk.ToString(ng.ReleaseVersion))
	}
	if ng.Resources != nil {
		var groups []string
		for _, g := range ng.Resources.AutoScalingGroups {
			groups = append(groups, awssdk.ToString(g.Name))
		}
		if len(groups) > 0 {
			b.fact("auto scaling groups %s", strings.Join(groups, ", "))
		}
	}
	if ng.ModifiedAt != nil {
		b.fact("modified %s", ng.ModifiedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// rdsStatus maps DBInstanceStatus values to a verdict; others are unknown.
var rdsStatus = map[string]whatchanged.HealthStatus{
	"available": whatchanged.HealthHealthy,

	"backing-up": whatchanged.HealthDegraded, "configuring-enhanced-monitoring": whatchanged.HealthDegraded,
	"configuring-iam-database-auth": whatchanged.HealthDegraded, "configuring-log-exports": whatchanged.HealthDegraded,
	"converting-to-vpc": whatchanged.HealthDegraded, "creating": whatchanged.HealthDegraded, "maintenance": whatchanged.HealthDegraded,
	"modifying": whatchanged.HealthDegraded, "moving-to-vpc": whatchanged.HealthDegraded, "rebooting": whatchanged.HealthDegraded,
	"renaming": whatchanged.HealthDegraded, "resetting-master-credentials": whatchanged.HealthDegraded,
	"starting": whatchanged.HealthDegraded, "storage-optimization": whatchanged.HealthDegraded, "upgrading": whatchanged.HealthDegraded,
	"storage-config-upgrade": whatchanged.HealthDegraded, "storage-initialization": whatchanged.HealthDegraded,

	"deleting": whatchanged.HealthUnhealthy, "failed": whatchanged.HealthUnhealthy, "inaccessible-encryption-credentials": whatchanged.HealthUnhealthy,
	"inaccessible-encryption-credentials-recoverable": whatchanged.HealthUnhealthy, "incompatible-network": whatchanged.HealthUnhealthy,
	"incompatible-option-group": whatchanged.HealthUnhealthy, "incompatible-parameters": whatchanged.HealthUnhealthy,
	"incompatible-restore": whatchanged.HealthUnhealthy, "insufficient-capacity": whatchanged.HealthUnhealthy,
	"restore-error": whatchanged.HealthUnhealthy, "stopped": whatchanged.HealthUnhealthy, "stopping": whatchanged.HealthUnhealthy,
	"storage-full": whatchanged.HealthUnhealthy,
}

func (h *HealthChecker) rdsInstance(ctx context.Context, r Resource, b *bounded) error {
	if h.RDS == nil {
		return notConfigured("rds")
	}
	throttled := "RDS rate-limits Describe calls per account; retry in a minute"
	out, err := h.RDS.DescribeDBInstances(ctx, &rds.DescribeDBInstancesInput{DBInstanceIdentifier: awssdk.String(r.Name)}, rdsRegion(r.Region))
	if err != nil {
		return explain(call{what: "rds describe db instances", permission: "rds:DescribeDBInstances", throttled: throttled}, err)
	}
	var db *rdstypes.DBInstance
	for i := range out.DBInstances {
		if strings.EqualFold(awssdk.ToString(out.DBInstances[i].DBInstanceIdentifier), r.Name) {
			db = &out.DBInstances[i]
		}
	}
	if db == nil {
		return fmt.Errorf("%w: RDS DB instance %s in %s", ErrNotFound, r.Name, r.Region)
	}
	b.h.State = awssdk.ToString(db.DBInstanceStatus)
	if s, ok := rdsStatus[b.h.State]; ok {
		b.h.Status = s
		if s != whatchanged.HealthHealthy {
			b.problem("DB instance is %s", b.h.State)
		}
	}
	for _, si := range db.StatusInfos {
		if si.Normal != nil && !*si.Normal {
			b.worsen(whatchanged.HealthDegraded)
			b.problem("%s %s: %s", awssdk.ToString(si.StatusType), awssdk.ToString(si.Status), awssdk.ToString(si.Message))
		}
	}
	b.fact("engine %s %s, class %s", awssdk.ToString(db.Engine), awssdk.ToString(db.EngineVersion), awssdk.ToString(db.DBInstanceClass))
	zone := awssdk.ToString(db.AvailabilityZone)
	if awssdk.ToBool(db.MultiAZ) {
		b.fact("multi-AZ, primary %s, standby %s", zone, awssdk.ToString(db.SecondaryAvailabilityZone))
	} else if zone != "" {
		b.fact("single-AZ in %s", zone)
	}
	if db.AllocatedStorage != nil {
		b.fact("storage %d GiB %s", *db.AllocatedStorage, awssdk.ToString(db.StorageType))
	}
	if src := awssdk.ToString(db.ReadReplicaSourceDBInstanceIdentifier); src != "" {
		b.fact("read replica of %s", src)
	}
	if p := db.PendingModifiedValues; p != nil {
		var pending []string
		add := func(name, v string) {
			if v != "" {
				pending = append(pending, name+" "+v)
			}
		}
		add("class", awssdk.ToString(p.DBInstanceClass))
		add("engine version", awssdk.ToString(p.EngineVersion))
		if p.AllocatedStorage != nil {
			add("storage", fmt.Sprintf("%d GiB", *p.AllocatedStorage))
		}
		if p.MultiAZ != nil {
			add("multi-AZ", fmt.Sprint(*p.MultiAZ))
		}
		if p.Iops != nil {
			add("iops", fmt.Sprint(*p.Iops))
		}
		add("storage type", awssdk.ToString(p.StorageType))
		add("CA certificate", awssdk.ToString(p.CACertificateIdentifier))
		if len(pending) > 0 {
			sort.Strings(pending)
			b.fact("pending modifications: %s", strings.Join(pending, ", "))
		}
	}

	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	evs, err := h.RDS.DescribeEvents(ctx, &rds.DescribeEventsInput{
		SourceIdentifier: awssdk.String(r.Name),
		SourceType:       rdstypes.SourceTypeDbInstance,
		StartTime:        awssdk.Time(now.Add(-rdsEventWindow)),
		EndTime:          awssdk.Time(now),
		MaxRecords:       awssdk.Int32(100),
	}, rdsRegion(r.Region))
	if err != nil {
		return explain(call{what: "rds describe events", permission: "rds:DescribeEvents", throttled: throttled}, err)
	}
	// RDS lists events oldest first; keep the newest within the bound.
	list := evs.Events
	if len(list) > b.max {
		b.h.Omitted += len(list) - b.max
		list = list[len(list)-b.max:]
	}
	for _, e := range list {
		ev := whatchanged.CloudHealthEvent{Code: strings.Join(e.EventCategories, ","), Message: awssdk.ToString(e.Message)}
		if e.Date != nil {
			ev.At = e.Date.UTC()
		}
		b.event(ev)
	}
	return nil
}
