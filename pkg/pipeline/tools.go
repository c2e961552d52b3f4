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

package pipeline

import (
	"context"
	"encoding/json"

	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// ChangeTool lets a what-changed tool run in the investigation engine's
// registry: the same name, description, parameters and answer.
func ChangeTool(t whatchanged.Tool) tools.Tool { return changeTool{t} }

type changeTool struct{ whatchanged.Tool }

func (c changeTool) Parameters() json.RawMessage {
	raw, err := json.Marshal(c.Tool.Parameters())
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}

func (c changeTool) Run(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	res, err := c.Tool.Run(ctx, args)
	return tools.Result{Text: res.Text, Data: res.Data}, err
}
