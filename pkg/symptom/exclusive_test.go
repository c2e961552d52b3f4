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

package symptom

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestExcludesAndDirect(t *testing.T) {
	g := NewWithT(t)
	crash, oom := []Class{CrashLoop}, []Class{OOM}
	_, why, ok := Excludes(crash, []Class{ContainerConfig}, "Pod a/b is in waiting state")
	g.Expect(ok).To(BeTrue())
	g.Expect(why).To(ContainSubstring("never starts"))
	_, _, ok = Excludes(crash, []Class{CrashLoop, ContainerConfig}, "Pod a/b is in waiting state")
	g.Expect(ok).To(BeFalse(), "an entry about both presentations covers the crash loop")
	_, _, ok = Excludes(crash, []Class{CrashLoop, ContainerConfig}, "panic: runtime error")
	g.Expect(ok).To(BeTrue(), "unless the alert shows the process exiting on its own")
	_, _, ok = Excludes([]Class{CrashLoop, ContainerConfig}, []Class{ContainerConfig}, "")
	g.Expect(ok).To(BeFalse(), "the alert names the waiting reason too")
	_, _, ok = Excludes(crash, oom, "panic: runtime error: invalid memory address")
	g.Expect(ok).To(BeTrue(), "a panic is not an OOM kill")
	_, _, ok = Excludes(crash, oom, "exit code 137, OOMKilled")
	g.Expect(ok).To(BeFalse())
	_, _, ok = Excludes(crash, oom, "is in waiting state (reason: CrashLoopBackOff)")
	g.Expect(ok).To(BeFalse(), "a template says nothing about how the process exited")
	_, _, ok = Excludes(oom, []Class{ImagePull}, "")
	g.Expect(ok).To(BeFalse(), "only a crash loop excludes a container that never starts")

	g.Expect(Direct(oom, []Class{MemorySaturation})).To(BeTrue())
	g.Expect(Direct(crash, oom)).To(BeTrue())
	g.Expect(Direct([]Class{Connections}, []Class{Lag})).To(BeFalse(), "lag explains connections only through another component")
	g.Expect(Direct(crash, []Class{Certificate})).To(BeFalse())
}
