package main

import (
	"io"
	"strings"
	"testing"
)

func TestTrustedProxiesSetting(t *testing.T) {
	cfg, err := parseConfig([]string{"-trusted-proxies", "10.0.0.0/8, 192.168.1.7,fd00::/8"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cfg.trustedProxies); got != 3 {
		t.Fatalf("%d trusted prefixes, want 3", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1-10.0.0.9", "fe80::1%eth0"} {
		_, err := parseConfig(nil, func(k string) string {
			if k == "TRUSTED_PROXIES" {
				return bad
			}
			return ""
		}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
			t.Errorf("TRUSTED_PROXIES=%s: %v, want an error naming the setting", bad, err)
		}
	}
}
