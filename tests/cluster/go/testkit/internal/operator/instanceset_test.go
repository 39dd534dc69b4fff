package operator

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// An HPA role's InstanceSet gets labelSelector and scalingResourceStatus only where the HPA path exists, i.e. when
// autoscaling/v2 is served (infer-operator-rules.md C1): on 1.19 the fake operator wrote them all the same.
func TestHPAStatusFieldsOnlyWithAutoscalingV2(t *testing.T) {
	for _, served := range []bool{false, true} {
		ist := New(InstanceSetGVK)
		ist.SetNamespace("ns")
		ist.SetName("svc-0-decode")
		ist.SetGeneration(1)
		scheme := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ist).WithStatusSubresource(ist).Build()
		r := &instanceSetReconciler{client: c, apiReader: c, hpaServed: served}
		role := &roleSpec{Name: "decode", Replicas: ptr.To[int32](1), Workload: workloadType{Kind: "StatefulSet"},
			ScalingPolicy: &scalingPolicy{Type: "HPA"}}
		var scaling *scalingStatus
		if served {
			scaling = &scalingStatus{Type: "HPA", Name: hpaName(ist)}
		}
		if err := r.writeStatus(context.Background(), ist, role, "svc-0", "decode", 1, scaling); err != nil {
			t.Fatal(err)
		}
		got := New(InstanceSetGVK)
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ist), got); err != nil {
			t.Fatal(err)
		}
		_, hasSelector, _ := unstructured.NestedString(got.Object, "status", "labelSelector")
		_, hasScaling, _ := unstructured.NestedMap(got.Object, "status", "scalingResourceStatus")
		if hasSelector != served || hasScaling != served {
			t.Errorf("autoscaling/v2 served %v: status.labelSelector written %v, scalingResourceStatus written %v",
				served, hasSelector, hasScaling)
		}
	}
}
