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

package graph

import (
	"strings"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/symptom"
)

// RelConnectsTo ties what names a cloud resource (a pod by its env values
// or arguments, a ConfigMap by its values) to the resource, and the
// subject to every cloud resource its side names.
const RelConnectsTo = "connects-to"

// WordCannotConnect is the symptom a cloud resource shows on a graph whose
// subject fails to connect: the subject's own words (its pods' last
// words, its Events, its alert) say a connection was refused, reset, timed
// out or never routed (symptom.CannotConnect). It is what the subject
// meets, not a reading of the resource: the cluster cannot read a cloud
// resource's health.
const WordCannotConnect = "CannotConnect"

// WordCloudUnhealthy is the symptom a cloud resource shows when the cloud
// provider reads it degraded or unhealthy; FactCloudHealth records the
// provider's verdict. The graph never reads the cloud: whoever holds a
// cloud source (the correlation's health check) attaches them.
const (
	WordCloudUnhealthy = "CloudUnhealthy"
	FactCloudHealth    = "cloudHealth"
)

// maxCloudNodes bounds the cloud resources one graph holds.
const maxCloudNodes = 8

// cloud links the subject's side to the cloud resources its configuration
// names (identity.CloudResources over its pods' env values and arguments
// and the values of the ConfigMaps they read), one node each, known by
// reference only, and marks them with WordCannotConnect when the subject
// cannot connect.
func (st *build) cloud() {
	subject := st.g.SubjectNode()
	if subject == nil || subject.Namespace == "" {
		return
	}
	own := st.ownPods()
	own[subject.Ref()] = true
	var added []*Node
	for _, t := range st.texts {
		if len(added) >= maxCloudNodes {
			break
		}
		from := st.g.Node(t.from)
		if from == nil {
			continue
		}
		for _, w := range identity.CloudResources(t.text) {
			n := st.g.Node(Ref(w.Kind, "", w.Name))
			if n == nil {
				if len(added) >= maxCloudNodes {
					break
				}
				n = st.add(&Node{Kind: w.Kind, Name: w.Name, Unread: true, Facts: map[string]string{"cloud": "true"}})
				if n == nil {
					return
				}
				added = append(added, n)
			}
			if w.Region != "" {
				n.fact("region", w.Region)
			}
			if w.Account != "" {
				n.fact("account", w.Account)
			}
			st.g.Link(from.Ref(), RelConnectsTo, n.Ref(), "")
			if !own[from.Ref()] {
				st.g.Link(subject.Ref(), RelConnectsTo, n.Ref(), "named by "+from.Ref())
			}
		}
	}
	if len(added) == 0 {
		return
	}
	if why := st.cannotConnect(subject); why != "" {
		for _, n := range added {
			n.Symptoms = append(n.Symptoms, Symptom{Word: WordCannotConnect, Source: "caller", Type: subject.Ref(), Message: why})
		}
	}
}

// cannotConnect is the first of the subject side's words that say a
// connection failed: its alert, or a symptom of the subject or its own pods
// whose trouble can come over the network. A failing probe's refusal is
// the pod's own port, not something it calls, so it does not count.
func (st *build) cannotConnect(subject *Node) string {
	if symptom.CannotConnect(st.subjectText) {
		return oneLine(st.subjectText, 300)
	}
	side := []*Node{subject}
	side = append(side, st.g.Pods(subject.Ref())...)
	for _, n := range side {
		for _, s := range n.Symptoms {
			if s.Word == "Unhealthy" || strings.Contains(strings.ToLower(s.Message), "probe failed") || !symptom.OverTheNetwork(s.Word) {
				continue
			}
			if symptom.CannotConnect(s.Message) {
				return oneLine(n.Ref()+" "+s.Word+": "+s.Message, 300)
			}
		}
	}
	return ""
}
