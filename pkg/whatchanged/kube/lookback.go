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

package kube

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
)

// LastHealthy implements whatchanged.Lookback for scheduled work: a CronJob
// (or a Job a CronJob runs) shows a change only when it next runs, so the
// change that broke tonight's run may be many hours older than the failure;
// the window reaches back to its last successful run. Zero for anything
// else, or when the CronJob never succeeded.
func (c *Collector) LastHealthy(ctx context.Context, inc whatchanged.Incident) (time.Time, error) {
	if c.Client == nil || inc.Namespace == "" {
		return time.Time{}, nil
	}
	name := ""
	switch inc.Kind {
	case "CronJob":
		name = inc.Name
	case "Job":
		var j batchv1.Job
		if err := c.reader().Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: inc.Name}, &j); err != nil {
			return time.Time{}, ignoreNotFound(err, "get job %s/%s", inc.Namespace, inc.Name)
		}
		o := metav1.GetControllerOf(&j)
		if o == nil || o.Kind != "CronJob" {
			return time.Time{}, nil
		}
		name = o.Name
	default:
		return time.Time{}, nil
	}
	var cj batchv1.CronJob
	if err := c.reader().Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: name}, &cj); err != nil {
		return time.Time{}, ignoreNotFound(err, "get cronjob %s/%s", inc.Namespace, name)
	}
	if t := cj.Status.LastSuccessfulTime; t != nil {
		return t.Time, nil
	}
	return time.Time{}, nil
}

func ignoreNotFound(err error, format string, args ...any) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return readErr(err, format, args...)
}
