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

package promql

import "testing"

func TestParseRejectsMalformedAnswers(t *testing.T) {
	for _, body := range []string{
		`not json`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}`,
		`{"status":"success","data":{"resultType":"histogram","result":[]}}`,
		`{"status":"error"}`,
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("Parse(%s) succeeded", body)
		}
	}
	res, err := Parse([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1796004600,"2"]}}`))
	if err != nil || len(res.Series) != 1 || res.Series[0].Values[0].V != 2 {
		t.Fatalf("scalar: %+v %v", res, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"2"]]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := Parse(body)
		if err == nil && res.ResultType == "" {
			t.Fatalf("success without a result type: %q", body)
		}
	})
}
