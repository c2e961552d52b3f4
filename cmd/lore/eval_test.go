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

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

func TestRunEval(t *testing.T) {
	g := NewWithT(t)
	var out, errOut bytes.Buffer
	g.Expect(runEval(nil, &out, &errOut)).To(Equal(2))
	g.Expect(errOut.String()).To(ContainSubstring("usage: lore eval recall"))

	errOut.Reset()
	g.Expect(runEval([]string{"nonsense"}, &out, &errOut)).To(Equal(2))
	g.Expect(errOut.String()).To(ContainSubstring(`unknown suite "nonsense"`))

	out.Reset()
	code := runEval([]string{"recall", "--catalog", "../../test/recall/catalog", "--cases", "../../test/recall/cases.jsonl", "--json"}, &out, &errOut)
	g.Expect(code).To(Equal(0), errOut.String())
	var rep struct {
		Positives int     `json:"positives"`
		FireRate  float64 `json:"fire_rate"`
	}
	g.Expect(json.Unmarshal(out.Bytes(), &rep)).To(Succeed())
	g.Expect(rep.Positives).To(BeNumerically(">=", 25))
}
