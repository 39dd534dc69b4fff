package operator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A server without autoscaling/v2 (Kubernetes before 1.23) has no HPA path: the operator neither caches nor
// watches HPAs, as the real one does not (Ascend/mind-cluster component/infer-operator/main.go, main:
// APIGroupVersionExists "autoscaling/v2" decides SupportHPAScaling). Found on a 1.19 cluster, where the fake
// operator did not start at all ("no matches for kind HorizontalPodAutoscaler in version autoscaling/v2").
func TestHPAServedFollowsDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      bool
	}{
		{"1.19: autoscaling/v2beta2 only", []*metav1.APIResourceList{{GroupVersion: "autoscaling/v2beta2",
			APIResources: []metav1.APIResource{{Name: "horizontalpodautoscalers"}}}}, false},
		{"1.23 and later: autoscaling/v2", []*metav1.APIResourceList{{GroupVersion: "autoscaling/v2",
			APIResources: []metav1.APIResource{{Name: "horizontalpodautoscalers"},
				{Name: "horizontalpodautoscalers/status"}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.resources}}
			got, err := HPAServed(d)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("HPAServed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoHPAWatchWithoutAutoscalingV2(t *testing.T) {
	isHPA := func(o any) bool { _, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); return ok }
	for _, hpa := range []bool{false, true} {
		f := Features{MindCluster: true, HPA: hpa}
		cached, watched := false, false
		for o := range CacheByObject(f) {
			cached = cached || isHPA(o)
		}
		for _, o := range Watched(f) {
			watched = watched || isHPA(o)
		}
		if cached != hpa || watched != hpa {
			t.Errorf("HPA served %v: cached %v, watched %v", hpa, cached, watched)
		}
	}
}

// testCRD is CustomResourceDefinition `name` with condition Established `established` ("" for no conditions yet).
func testCRD(name string, established metav1.ConditionStatus) client.Object {
	crd := New(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	crd.SetName(name)
	if established != "" {
		crd.Object["status"] = map[string]any{"conditions": []any{
			map[string]any{"type": "NamesAccepted", "status": "True"},
			map[string]any{"type": "Established", "status": string(established)},
		}}
	}
	return crd
}

// Models Ascend/mind-cluster component/infer-operator/main.go, main: the manager is made with the cache options of
// createCacheOptions, which name Volcano's PodGroup, so without an established podgroups.scheduling.volcano.sh CRD
// the real operator exits with "unable to start manager: ..." (its log line) and the RESTMapper's "no matches for
// kind". Driven through Detect (the CRDs the fake reads at start) and StartupError, as cmd/mindie-fake-operator
// does. Without the infer-operator CRDs the fake starts all the same (its AIBrix model runs alone).
func TestStartupNeedsThePodGroupCRD(t *testing.T) {
	mindCluster := []client.Object{testCRD(crdInferServiceSet, metav1.ConditionTrue),
		testCRD(crdInferService, metav1.ConditionTrue), testCRD(crdInstanceSet, metav1.ConditionTrue)}
	for _, tc := range []struct {
		name    string
		crds    []client.Object
		refused bool
	}{
		{"PodGroup CRD established", append(slices.Clone(mindCluster), testCRD(crdPodGroup, metav1.ConditionTrue)), false},
		{"PodGroup CRD absent", mindCluster, true},
		{"PodGroup CRD not established", append(slices.Clone(mindCluster), testCRD(crdPodGroup, metav1.ConditionFalse)),
			true},
		{"PodGroup CRD without conditions yet", append(slices.Clone(mindCluster), testCRD(crdPodGroup, "")), true},
		{"no infer-operator CRDs", nil, false},
		{"an infer-operator CRD missing", mindCluster[:2], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Detect(context.Background(), testClient(t, nil, tc.crds...))
			if err != nil {
				t.Fatal(err)
			}
			err = StartupError(f)
			if !tc.refused {
				if err != nil {
					t.Fatalf("features %+v: %v, want a start", f, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("features %+v: it starts, want the refusal", f)
			}
			const noMatch = `no matches for kind "PodGroup" in version "scheduling.volcano.sh/v1beta1"`
			if msg := err.Error(); !strings.HasPrefix(msg, "unable to start manager: ") ||
				!strings.HasSuffix(msg, noMatch) || !meta.IsNoMatchError(err) {
				t.Errorf("got %q (a NoKindMatchError: %v), want \"unable to start manager: ... %s\"", msg,
					meta.IsNoMatchError(err), noMatch)
			}
		})
	}
}

// The refusal StartupError predicts is controller-runtime's own: a cache made with CacheByObject's options fails
// when the RESTMapper has no PodGroup, with the error StartupError wraps, and is made when it has one.
func TestPodGroupCacheIsWhatStopsTheManager(t *testing.T) {
	f := Features{MindCluster: true, PodGroup: true}
	want := &meta.NoKindMatchError{}
	if !errors.As(StartupError(Features{MindCluster: true}), &want) {
		t.Fatal("StartupError wraps no NoKindMatchError")
	}
	for _, podGroup := range []bool{false, true} {
		mapper := meta.NewDefaultRESTMapper(nil)
		for _, gvk := range []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
			appsv1.SchemeGroupVersion.WithKind("Deployment"), corev1.SchemeGroupVersion.WithKind("Service")} {
			mapper.Add(gvk, meta.RESTScopeNamespace)
		}
		if podGroup {
			mapper.Add(PodGroupGVK, meta.RESTScopeNamespace)
		}
		_, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"},
			cache.Options{Scheme: testScheme(t), Mapper: mapper, ByObject: CacheByObject(f)})
		if podGroup {
			if err != nil {
				t.Errorf("with PodGroup mapped: %v", err)
			}
			continue
		}
		got := &meta.NoKindMatchError{}
		if !errors.As(err, &got) || got.Error() != want.Error() {
			t.Errorf("without PodGroup: %v; want controller-runtime to fail with %q", err, want.Error())
		}
	}
}

// Models Ascend/mind-cluster component/infer-operator/main.go, createCacheOptions: the caches select the operator
// label's presence, so the HPA (label value "") and the operator's pods and workloads ("true") are seen, other objects
// not.
func TestCachesSelectTheOperatorLabelsPresence(t *testing.T) {
	for _, tc := range []struct {
		set  labels.Set
		want bool
	}{{labels.Set{LabelOperator: "true"}, true}, {labels.Set{LabelOperator: ""}, true}, {labels.Set{"app": "x"}, false}} {
		if got := operatorSelector.Matches(tc.set); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.set, got, tc.want)
		}
	}
	podGroup := false
	for o := range CacheByObject(Features{MindCluster: true, PodGroup: true}) {
		podGroup = podGroup || o.GetObjectKind().GroupVersionKind() == PodGroupGVK
	}
	if !podGroup {
		t.Error("the PodGroup cache is missing")
	}
}

// Models controller-runtime's default rate limiter, which the real operator's controllers use (no options):
// 5 ms doubling per failure of an item up to 1000 s. --max-backoff caps the doubling (the e2e tests' 30 s).
func TestFailedReconcilesBackOffExponentially(t *testing.T) {
	item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "x"}}
	for _, tc := range []struct {
		max  time.Duration
		last time.Duration
	}{{DefaultMaxBackoff, 1000 * time.Second}, {30 * time.Second, 30 * time.Second}} {
		rl := RateLimiter(tc.max)
		var got []time.Duration
		for range 40 {
			got = append(got, rl.When(item))
		}
		if got[0] != 5*time.Millisecond || got[1] != 10*time.Millisecond || got[10] != 5120*time.Millisecond {
			t.Errorf("max %s: first backoffs %v, want 5ms, 10ms, ... 5.12s", tc.max, got[:11])
		}
		if got[39] != tc.last {
			t.Errorf("max %s: backoff after 40 failures %s, want %s", tc.max, got[39], tc.last)
		}
		rl.Forget(item)
		if d := rl.When(item); d != 5*time.Millisecond {
			t.Errorf("max %s: after success the backoff starts at %s, want 5ms", tc.max, d)
		}
	}
}

// Models instanceset_controller.go WorkLoadPredicate and PodGroupPredicate: the creation of a workload, Service or
// PodGroup does not reconcile the InstanceSet; updates and deletions of the first three do, of a PodGroup only its
// deletion.
func TestInstanceSetIgnoresCreatesOfWhatItOwns(t *testing.T) {
	w, pg := workloadPredicate(), podGroupPredicate()
	sts := &appsv1.StatefulSet{}
	if w.Create(event.CreateEvent{Object: sts}) || !w.Update(event.UpdateEvent{ObjectOld: sts, ObjectNew: sts}) ||
		!w.Delete(event.DeleteEvent{Object: sts}) {
		t.Error("workload predicate: want create false, update and delete true")
	}
	group := New(PodGroupGVK)
	if pg.Create(event.CreateEvent{Object: group}) || pg.Update(event.UpdateEvent{ObjectOld: group, ObjectNew: group}) ||
		!pg.Delete(event.DeleteEvent{Object: group}) {
		t.Error("PodGroup predicate: want only delete true")
	}
}
