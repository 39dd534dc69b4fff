package operator

import (
	"context"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The tests drive the reconcilers and the pod handlers directly against controller-runtime's fake client: no
// informers, no timing. The fake client has no cache lag, so a workload the rescheduler deletes is gone when the
// same reconcile looks for it (on a cluster the next reconcile makes it again).

const testNS = "ns"

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// testClient is a fake client holding objs, the three mindcluster kinds with a status subresource, pods indexed by
// node.
func testClient(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(New(InstanceSetGVK), New(InferServiceGVK), New(InferServiceSetGVK)).
		WithIndex(&corev1.Pod{}, podNodeNameField, podNodeName)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

// testRole is a StatefulSet role of `pods` pods per instance, `instances` instances.
func testRole(instances, pods int64) map[string]any {
	return map[string]any{
		"name":     "decode",
		"replicas": instances,
		"workload": map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet"},
		"spec": map[string]any{
			"replicas": pods,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}},
			},
		},
	}
}

// testInstanceSet is InstanceSet "svc-0-<role>" as the InferService controller makes it, gang-scheduled or not.
func testInstanceSet(role string, gang bool, spec map[string]any) *unstructured.Unstructured {
	ist := New(InstanceSetGVK)
	ist.SetNamespace(testNS)
	ist.SetName("svc-0-" + role)
	ist.SetUID(types.UID("uid-" + role))
	ist.SetGeneration(1)
	ist.SetLabels(map[string]string{LabelInferService: "svc-0", LabelInstanceSet: role,
		LabelPriorityStrategy: StrategyParallel, LabelGangSchedule: strconv.FormatBool(gang)})
	ist.Object["spec"] = spec
	return ist
}

// testWorkload is the StatefulSet of instance k of role `role`, labelled as the operator labels it.
func testWorkload(role string, k int) *appsv1.StatefulSet {
	in := instance{namespace: testNS, service: "svc-0", role: role, index: k}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1ObjectMeta(in.workloadName(), in.labels(nil)),
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)},
	}
}

// testPod is pod `ordinal` of instance k of role `role`, with the operator's labels.
func testPod(role string, k, ordinal int) *corev1.Pod {
	in := instance{namespace: testNS, service: "svc-0", role: role, index: k}
	return &corev1.Pod{ObjectMeta: metav1ObjectMeta(in.workloadName()+"-"+strconv.Itoa(ordinal), in.labels(nil))}
}

func testReconciler(c client.Client) *instanceSetReconciler {
	return &instanceSetReconciler{client: c, apiReader: c, recorder: record.NewFakeRecorder(100),
		rescheduler: newRescheduler(c), supportPodGroup: true}
}

func reconcileOnce(t *testing.T, r *instanceSetReconciler, ist *unstructured.Unstructured) reconcile.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ist)})
	if err != nil {
		t.Fatalf("reconcile %s: %v", ist.GetName(), err)
	}
	return res
}

// getWorkload reads StatefulSet `name`; nil when it does not exist.
func getWorkload(t *testing.T, c client.Client, name string) *appsv1.StatefulSet {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: name}, sts)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return sts
}

// deleteCounter counts the deletes of each kind of object through the fake client.
func deleteCounter(counts map[string]int) *interceptor.Funcs {
	return &interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object,
		opts ...client.DeleteOption) error {
		switch obj.(type) {
		case *appsv1.StatefulSet:
			counts["StatefulSet"]++
		case *appsv1.Deployment:
			counts["Deployment"]++
		case *corev1.Pod:
			counts["Pod"]++
		}
		return c.Delete(ctx, obj, opts...)
	}}
}

func metav1ObjectMeta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: testNS, Name: name, Labels: labels}
}
