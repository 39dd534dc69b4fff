package operator

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// A server without autoscaling/v2 (Kubernetes before 1.23) has no HPA path: the operator neither caches nor
// watches HPAs, as the real one does not (infer-operator-rules.md C1). Found on a 1.19 cluster, where the fake
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
