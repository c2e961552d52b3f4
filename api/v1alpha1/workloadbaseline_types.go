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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BaselineSeriesName names one key series of a workload baseline.
// +kubebuilder:validation:Enum=cpu;memory;restarts;requests;errors
type BaselineSeriesName string

const (
	// BaselineCPU: CPU used by the workload's busiest container, in cores.
	BaselineCPU BaselineSeriesName = "cpu"
	// BaselineMemory: the largest container memory working set, in bytes.
	BaselineMemory BaselineSeriesName = "memory"
	// BaselineRestarts: container restarts across the workload per hour.
	BaselineRestarts BaselineSeriesName = "restarts"
	// BaselineRequests: requests served per second, when the workload
	// exports a request counter.
	BaselineRequests BaselineSeriesName = "requests"
	// BaselineErrors: failed requests per second, when the workload
	// exports a request counter with a status code.
	BaselineErrors BaselineSeriesName = "errors"
)

// BaselineComputedReason and the other reasons of a WorkloadBaseline's
// Ready condition.
const (
	// BaselineComputedReason: every series was queried (a series without
	// data says so on its own entry).
	BaselineComputedReason = "Computed"
	// BaselineQueryFailedReason: the metrics backend refused or failed a
	// query; the figures are from the last good run, if any.
	BaselineQueryFailedReason = "QueryFailed"
	// BaselineNoDataReason: no series returned any sample over the window.
	BaselineNoDataReason = "NoData"
)

// BaselineSeries is the 7-day distribution of one key series.
type BaselineSeries struct {
	// name is the series: cpu, memory, restarts, requests or errors.
	Name BaselineSeriesName `json:"name"`
	// query is the PromQL expression, with the workload filled in, whose
	// range the percentiles are over; the same expression evaluated now is
	// what the investigation compares against them.
	// +kubebuilder:validation:MaxLength=2048
	Query string `json:"query"`
	// unit of p50, p95 and max: cores, bytes, restarts/h, requests/s.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Unit string `json:"unit,omitempty"`
	// p50 is the median over the window, a decimal number in unit.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	P50 string `json:"p50,omitempty"`
	// p95 is the 95th percentile over the window, a decimal number in unit.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	P95 string `json:"p95,omitempty"`
	// max is the largest sample over the window, a decimal number in unit.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Max string `json:"max,omitempty"`
	// samples counts the points the percentiles are over.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Samples int32 `json:"samples,omitempty"`
	// unavailable says why this series has no figures (the metric is not
	// exported, the query failed); empty when it has them.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Unavailable string `json:"unavailable,omitempty"`
}

// WorkloadBaselineStatus is the baseline job's record of what is normal for
// one workload. It has no spec: the baseline job writes it for each
// workload that had an incident, and deletes it once the workload is gone
// or has had no incident for the retention period.
type WorkloadBaselineStatus struct {
	// conditions: Ready (the last run computed the figures).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// workload is the workload the figures describe.
	// +optional
	Workload *Workload `json:"workload,omitempty"`
	// window is how far back the percentiles reach (7 days by default).
	// +optional
	Window metav1.Duration `json:"window,omitempty"`
	// step is the resolution of the range queries.
	// +optional
	Step metav1.Duration `json:"step,omitempty"`
	// computedAt is when the figures were last computed.
	// +optional
	ComputedAt *metav1.Time `json:"computedAt,omitempty"`
	// source is the metrics backend the figures came from (its flavor and
	// API root, without credentials).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Source string `json:"source,omitempty"`
	// lastIncidentAt is when an Incident about the workload last fired;
	// the baseline is deleted once that is older than the retention period.
	// +optional
	LastIncidentAt *metav1.Time `json:"lastIncidentAt,omitempty"`
	// series are the key series' distributions.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Series []BaselineSeries `json:"series,omitempty"`
	// cpuP95 is the cpu series' p95 for display (e.g. 250m).
	// +kubebuilder:validation:MaxLength=32
	// +optional
	CPUP95 string `json:"cpuP95,omitempty"`
	// memoryP95 is the memory series' p95 for display (e.g. 512Mi).
	// +kubebuilder:validation:MaxLength=32
	// +optional
	MemoryP95 string `json:"memoryP95,omitempty"`
	// restartsP95 is the restarts series' p95 for display (per hour).
	// +kubebuilder:validation:MaxLength=32
	// +optional
	RestartsP95 string `json:"restartsP95,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=baseline,categories=runlore
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.workload.name`
// +kubebuilder:printcolumn:name="CPU-P95",type=string,JSONPath=`.status.cpuP95`
// +kubebuilder:printcolumn:name="MEM-P95",type=string,JSONPath=`.status.memoryP95`
// +kubebuilder:printcolumn:name="Restarts-P95",type=string,JSONPath=`.status.restartsP95`
// +kubebuilder:printcolumn:name="Computed",type=date,JSONPath=`.status.computedAt`
// +kubebuilder:printcolumn:name="Workload-Namespace",type=string,JSONPath=`.status.workload.namespace`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// WorkloadBaseline is the p50/p95 of one workload's key series over the
// last 7 days, computed from Prometheus by a nightly job so an
// investigation judges the workload against its own normal, not a global
// threshold.
type WorkloadBaseline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status WorkloadBaselineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadBaselineList is a list of WorkloadBaselines.
type WorkloadBaselineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadBaseline `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WorkloadBaseline{}, &WorkloadBaselineList{})
}
