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

import "flag"

// cloudConfig is lore serve's configuration of cloud change sources.
type cloudConfig struct {
	AWS bool `json:"aws,omitempty"`
}

func defaultCloudConfig() cloudConfig {
	return cloudConfig{}
}

func bindCloudFlags(fs *flag.FlagSet, cfg *cloudConfig) {
	fs.BoolVar(&cfg.AWS, "aws", cfg.AWS, "add AWS CloudTrail to the change timeline and the cloud_resource_health tool, through the default credential chain (IRSA or Pod Identity)")
}
