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

// The operator's image holds no CA bundle (it is the lore binary and a
// passwd file): the Mozilla roots compiled in here verify model, forge, chat
// and cloud endpoints there. Go uses them only where the system has no
// roots of its own, so a host's or a mounted bundle still wins.
import _ "golang.org/x/crypto/x509roots/fallback"
