package main

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/upstream"
)

// k8sObject is the part of a Kubernetes manifest these tests check.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"` // ConfigMap
	Spec struct {
		Selector       map[string]any `yaml:"selector"` // Service: labels; Deployment: matchLabels
		ScaleTargetRef struct {
			Kind string `yaml:"kind"`
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas int `yaml:"minReplicas"`
		MaxReplicas int `yaml:"maxReplicas"`
		Ports       []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	EnvFrom []struct {
		ConfigMapRef struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef struct {
			Name     string `yaml:"name"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	Exec *struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
}

// readManifests parses every document of every YAML file in deploy/k8s.
func readManifests(t *testing.T) (objects map[string]k8sObject, files []string) {
	t.Helper()
	paths, err := filepath.Glob("deploy/k8s/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests in deploy/k8s: %v", err)
	}
	objects = map[string]k8sObject{}
	for _, path := range paths {
		files = append(files, filepath.Base(path))
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for i := 0; ; i++ {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s document %d: %v", path, i, err)
			}
			if o.Kind == "" || o.APIVersion == "" {
				t.Fatalf("%s document %d has no kind or apiVersion", path, i)
			}
			if o.Kind == "Kustomization" {
				continue
			}
			if o.Metadata.Name == "" {
				t.Fatalf("%s document %d (%s) has no name", path, i, o.Kind)
			}
			objects[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	return objects, files
}

func TestKubernetesManifests(t *testing.T) {
	objects, files := readManifests(t)
	for _, want := range []string{"Deployment/gateway", "Service/gateway", "HorizontalPodAutoscaler/gateway",
		"ConfigMap/gateway-config", "Deployment/gateway-redis", "Service/gateway-redis", "PodDisruptionBudget/gateway"} {
		if _, ok := objects[want]; !ok {
			t.Errorf("no %s in deploy/k8s", want)
		}
	}

	// The kustomization lists every other manifest.
	raw, err := os.ReadFile("deploy/k8s/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "kustomization.yaml" && !slices.Contains(kust.Resources, f) {
			t.Errorf("kustomization.yaml does not list %s", f)
		}
	}

	gw := objects["Deployment/gateway"]
	if len(gw.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the gateway Deployment has %d containers", len(gw.Spec.Template.Spec.Containers))
	}
	c := gw.Spec.Template.Spec.Containers[0]
	if !gw.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Error("the gateway does not run as non-root")
	}
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for name, probe := range map[string]*k8sProbe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != name || ports[probe.HTTPGet.Port] == 0 {
			t.Errorf("probe of %s: %+v (ports %v)", name, probe, ports)
		}
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" || c.Resources.Limits[r] == "" {
			t.Errorf("the gateway has no %s request or limit: %+v", r, c.Resources)
		}
	}

	// The ConfigMap and the container's environment are settings the
	// gateway accepts, with values it accepts.
	cm := objects["ConfigMap/gateway-config"]
	if len(c.EnvFrom) != 2 || c.EnvFrom[0].ConfigMapRef.Name != "gateway-config" {
		t.Errorf("the gateway does not take its environment from gateway-config: %+v", c.EnvFrom)
	}
	// CURSOR_KEY, shared by the replicas, comes from an optional Secret
	// (README, Running many replicas).
	if len(c.EnvFrom) != 2 || c.EnvFrom[1].SecretRef.Name != "gateway-cursor-key" || !c.EnvFrom[1].SecretRef.Optional {
		t.Errorf("the gateway does not take CURSOR_KEY from the optional Secret gateway-cursor-key: %+v", c.EnvFrom)
	}
	env := map[string]string{}
	for k, v := range cm.Data {
		env[k] = v
	}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	known := map[string]bool{"GOMEMLIMIT": true, "GOMAXPROCS": true, "GOGC": true}
	for _, s := range (&config{}).settings() {
		known[s.env] = true
	}
	for k := range env {
		if !known[k] {
			t.Errorf("the manifests set %s, which is no setting of the gateway", k)
		}
	}
	cfg, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the gateway refuses the manifests' configuration: %v", err)
	}
	if ports["http"] == 0 || !strings.HasSuffix(cfg.Listen, ":"+strconv.Itoa(ports["http"])) {
		t.Errorf("LISTEN_ADDR %q is not the container port %d", cfg.Listen, ports["http"])
	}
	// Prometheus scrapes the metrics port, which the Service does not expose.
	if ports["metrics"] == 0 || cfg.MetricsAddr == "" || !strings.HasSuffix(cfg.MetricsAddr, ":"+strconv.Itoa(ports["metrics"])) ||
		gw.Spec.Template.Metadata.Annotations["prometheus.io/port"] != strconv.Itoa(ports["metrics"]) {
		t.Errorf("METRICS_ADDR %q, the metrics port %d and the scrape annotation %q disagree", cfg.MetricsAddr, ports["metrics"], gw.Spec.Template.Metadata.Annotations["prometheus.io/port"])
	}
	for _, p := range objects["Service/gateway"].Spec.Ports {
		if p.TargetPort == "metrics" || strconv.Itoa(p.Port) == strconv.Itoa(ports["metrics"]) {
			t.Errorf("the gateway Service exposes the metrics port: %+v", p)
		}
	}
	grace := time.Duration(gw.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if grace <= cfg.ShutdownDelay+cfg.ShutdownTimeout {
		t.Errorf("terminationGracePeriodSeconds %s does not cover SHUTDOWN_DELAY %s + SHUTDOWN_TIMEOUT %s", grace, cfg.ShutdownDelay, cfg.ShutdownTimeout)
	}
	if cfg.ShutdownDelay <= 0 {
		t.Error("SHUTDOWN_DELAY is 0: readiness would not fail before the drain")
	}

	// REDIS_URL names the Redis Service.
	u, err := url.Parse(cfg.RedisURL)
	if err != nil || u.Hostname() != "gateway-redis" {
		t.Errorf("REDIS_URL %q does not name the gateway-redis Service", cfg.RedisURL)
	}
	if redis := objects["Service/gateway-redis"]; len(redis.Spec.Ports) == 0 || strconv.Itoa(redis.Spec.Ports[0].Port) != u.Port() {
		t.Errorf("REDIS_URL port %q is not the Service's %+v", u.Port(), redis.Spec.Ports)
	}

	// Services select their Deployments' pods; the HPA scales the gateway.
	for _, name := range []string{"gateway", "gateway-redis"} {
		svc, dep := objects["Service/"+name], objects["Deployment/"+name]
		for k, v := range svc.Spec.Selector {
			if dep.Spec.Template.Metadata.Labels[k] != v {
				t.Errorf("Service %s selects %s=%v, which Deployment %s's pods do not carry", name, k, v, name)
			}
		}
		if len(svc.Spec.Selector) == 0 {
			t.Errorf("Service %s selects nothing", name)
		}
	}
	hpa := objects["HorizontalPodAutoscaler/gateway"]
	if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != "gateway" || hpa.Spec.MinReplicas < 2 || hpa.Spec.MaxReplicas <= hpa.Spec.MinReplicas {
		t.Errorf("HPA %+v, min %d max %d", hpa.Spec.ScaleTargetRef, hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
}

// The shared Redis bounds what one message on the live feed's channel
// costs every replica (its client reads a whole message before the
// gateway's own cap drops it), below Redis's defaults (512 MB commands,
// 32 MB of pending pub/sub output), and still carries the largest batch
// the gateway publishes.
func TestRedisManifestBoundsPubSub(t *testing.T) {
	objects, _ := readManifests(t)
	containers := objects["Deployment/gateway-redis"].Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("the Redis Deployment has %d containers", len(containers))
	}
	// redis-server's options: --name, then its values up to the next one.
	opts := map[string][]string{}
	var name string
	for _, a := range containers[0].Args {
		if n, ok := strings.CutPrefix(a, "--"); ok {
			name = n
			opts[name] = []string{}
		} else if name != "" {
			opts[name] = append(opts[name], a)
		}
	}
	const largest, bound = redisstate.DefaultMaxLiveMessage, 16 << 20
	bulk := opts["proto-max-bulk-len"]
	if len(bulk) != 1 || redisBytes(t, bulk[0]) < largest || redisBytes(t, bulk[0]) > bound {
		t.Errorf("proto-max-bulk-len %q, want one size from %d to %d bytes", bulk, largest, bound)
	}
	// The upstream cache's values: signed (a 32-byte MAC) and written
	// whole.
	if len(bulk) == 1 && redisBytes(t, bulk[0]) < upstream.MaxSharedCacheValue+32 {
		t.Errorf("proto-max-bulk-len %q refuses the upstream cache's largest value (%d bytes)", bulk, upstream.MaxSharedCacheValue+32)
	}
	limit := opts["client-output-buffer-limit"]
	if len(limit) != 4 || limit[0] != "pubsub" {
		t.Fatalf("client-output-buffer-limit %q, want pubsub HARD SOFT SECONDS", limit)
	}
	hard, soft := redisBytes(t, limit[1]), redisBytes(t, limit[2])
	if hard < largest || hard > bound || soft <= 0 || soft > hard {
		t.Errorf("client-output-buffer-limit %q: want a hard limit from %d to %d bytes, and a soft one under it", limit, largest, bound)
	}
	if secs, err := strconv.Atoi(limit[3]); err != nil || secs <= 0 {
		t.Errorf("client-output-buffer-limit %q: soft limit seconds %q", limit, limit[3])
	}
}

// redisBytes reads a size in redis.conf's units (1k = 1000, 1kb = 1024, …).
func redisBytes(t *testing.T, s string) int {
	t.Helper()
	units := []struct {
		suffix string
		n      int
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"", 1}}
	lower := strings.ToLower(s)
	for _, u := range units {
		if num, ok := strings.CutSuffix(lower, u.suffix); ok {
			n, err := strconv.Atoi(num)
			if err != nil {
				t.Fatalf("size %q: %v", s, err)
			}
			return n * u.n
		}
	}
	return 0
}
