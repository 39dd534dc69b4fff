package operator

import (
	"context"
	"errors"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Models Ascend/mind-cluster component/infer-operator/pkg/controller/v1/instanceset_controller.go, getNewStatus and the
// HPA path of its Reconcile (reconcileScalingResources, updateStatusForScaling; taken only where main.go's
// APIGroupVersionExists finds autoscaling/v2): where autoscaling/v2 is served every InstanceSet gets
// status.labelSelector, and scalingResourceStatus only an HPA role; without autoscaling/v2 neither (on 1.19 the fake
// operator wrote them all the same). Ready says "All WorkLoad replicas are ready".
func TestStatusFieldsOfTheHPAPath(t *testing.T) {
	for _, served := range []bool{false, true} {
		for _, hpa := range []bool{false, true} {
			ist := testInstanceSet("decode", false, testRole(0, 1))
			c := testClient(t, nil, ist)
			r := testReconciler(c)
			r.hpaServed = served
			role := &roleSpec{Name: "decode", Replicas: ptr.To[int32](0), Workload: workloadType{Kind: "StatefulSet"}}
			var scaling *scalingStatus
			if hpa {
				role.ScalingPolicy = &scalingPolicy{Type: "HPA"}
				scaling = &scalingStatus{Type: "HPA", Name: hpaName(ist)}
			}
			if err := r.writeStatus(context.Background(), ist, role, "svc-0", "decode", 0, scaling); err != nil {
				t.Fatal(err)
			}
			got := New(InstanceSetGVK)
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(ist), got); err != nil {
				t.Fatal(err)
			}
			selector, _, _ := unstructured.NestedString(got.Object, "status", "labelSelector")
			_, hasScaling, _ := unstructured.NestedMap(got.Object, "status", "scalingResourceStatus")
			if want := "infer.huawei.com/inferservice-name=svc-0,infer.huawei.com/instanceset-name=decode"; served &&
				selector != want || !served && selector != "" {
				t.Errorf("autoscaling/v2 %v, HPA role %v: labelSelector %q", served, hpa, selector)
			}
			if hasScaling != (served && hpa) {
				t.Errorf("autoscaling/v2 %v, HPA role %v: scalingResourceStatus written %v", served, hpa, hasScaling)
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			if len(conds) != 1 || conds[0].(map[string]any)["message"] != "All WorkLoad replicas are ready" {
				t.Errorf("conditions %v, want Ready with \"All WorkLoad replicas are ready\"", conds)
			}
		}
	}
}

// Models instanceset_controller.go validate and validateServices, workload_reconciler.go Validate with
// common.WorkLoadTypeToGVK and WorkLoadHandlerFactory.GetWorkLoadHandler, and the handlers' parse*WithScheme: each
// refusal is a ValidateError event with the real operator's message.
func TestValidateErrorMessages(t *testing.T) {
	nodePort := func(role map[string]any) {
		role["services"] = []any{map[string]any{"name": "infer", "spec": map[string]any{"type": "NodePort",
			"ports": []any{map[string]any{"port": int64(80)}}}}}
	}
	for _, tc := range []struct {
		edit func(role map[string]any, labels map[string]string)
		want string
	}{
		{func(_ map[string]any, l map[string]string) { l[LabelGangSchedule] = "true" },
			"label gang-schedule is true, but PodGroup not supported now, please check if volcano installed in k8s"},
		{func(r map[string]any, _ map[string]string) { delete(r, "replicas") },
			"jobSpec is not valid: replicas cannot be nil"},
		{func(r map[string]any, _ map[string]string) { r["replicas"] = int64(-1) },
			"jobSpec is not valid: replicas can not be negative num, but but got -1"},
		{func(_ map[string]any, l map[string]string) { delete(l, LabelInstanceSet) },
			"label <infer.huawei.com/instanceset-name> is missing"},
		{func(r map[string]any, _ map[string]string) { nodePort(r) }, "nodePort of service<infer> should config as non-zero"},
		{func(r map[string]any, _ map[string]string) {
			r["workload"] = map[string]any{"apiVersion": "batch/v1", "kind": "Job"}
		},
			"can not find workload handler for GVK batch/v1, Kind=Job"},
		{func(r map[string]any, _ map[string]string) { delete(r, "spec") }, "raw extension is empty"},
		{func(r map[string]any, _ map[string]string) { r["spec"] = map[string]any{"replicas": "two"} },
			"failed to unmarshal RawExtension to StatefulSetSpec: "},
	} {
		role := testRole(1, 1)
		labels := map[string]string{LabelInferService: "svc-0", LabelInstanceSet: "decode"}
		tc.edit(role, labels)
		ist := testInstanceSet("decode", false, role)
		ist.SetLabels(labels)
		var spec roleSpec
		if _, err := decodeField(ist, &spec, "spec"); err != nil {
			t.Fatal(err)
		}
		r := &instanceSetReconciler{}
		if got := r.validate(ist, &spec); got == "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// Models instanceset_controller.go checkOrCreateService and Reconcile: a refused role Service is a
// ServiceCreateError event "Failed to create service <entry>: <error>" from the InstanceSet controller, no workload
// is made, and the reconcile fails, so that it is retried with the controller's backoff (RateLimiter).
func TestRefusedRoleServiceStopsTheInstanceSet(t *testing.T) {
	refusal := errors.New(`Service "infer-svc-0-decode" is invalid: spec.ports[0].nodePort: Invalid value: 31015: ` +
		`provided port is already allocated`)
	funcs := &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object,
		opts ...client.CreateOption) error {
		if s, ok := obj.(*corev1.Service); ok && strings.HasPrefix(s.Name, "infer-") {
			return refusal
		}
		return c.Create(ctx, obj, opts...)
	}}
	role := testRole(1, 1)
	role["services"] = []any{map[string]any{"name": "infer", "spec": map[string]any{"type": "NodePort",
		"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(31015)}}}}}
	ist := testInstanceSet("decode", false, role)
	c := testClient(t, funcs, ist)
	r := testReconciler(c)
	recorder := r.recorder.(*record.FakeRecorder)
	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ist)})
	if err == nil {
		t.Fatal("the reconcile succeeded; want an error (retried with backoff)")
	}
	want := "Warning ServiceCreateError Failed to create service infer: " + refusal.Error()
	if got := <-recorder.Events; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	if getWorkload(t, c, "svc-0-decode-0") != nil {
		t.Error("a workload was made after the role Service was refused")
	}
}

// Models Ascend/mind-cluster component/infer-operator/pkg/controller/scaling/scaling_manager.go,
// ReconcileScalingResource, createHPA, updateHPA, buildScalingResourceLabels and cleanupScalingResource: the HPA
// carries the InstanceSet's labels and annotations, scaling-owned-by and the operator label "" (no instance index);
// "HPA created successfully" the first time, "HPA updated successfully" from then on; the role without the policy
// loses it.
func TestHPAOfAnHPARole(t *testing.T) {
	role := testRole(1, 1)
	role["scalingPolicy"] = map[string]any{"type": "HPA", "spec": map[string]any{"maxReplicas": int64(3)}}
	ist := testInstanceSet("decode", false, role)
	ist.SetAnnotations(map[string]string{AnnotationSchedulePolicy: "chip8-node8"})
	c := testClient(t, nil, ist)
	r := testReconciler(c)
	r.hpaServed = true
	var spec roleSpec
	if _, err := decodeField(ist, &spec, "spec"); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for range 2 {
		st, err := r.reconcileHPA(context.Background(), ist, &spec)
		if err != nil || st == nil || !st.Ready {
			t.Fatalf("got %+v, %v", st, err)
		}
		messages = append(messages, st.Message)
	}
	if messages[0] != "HPA created successfully" || messages[1] != "HPA updated successfully" {
		t.Errorf("messages %q", messages)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: "svc-0-decode-scaler"}, hpa); err != nil {
		t.Fatal(err)
	}
	l := hpa.Labels
	if v, ok := l[LabelOperator]; !ok || v != "" || l[LabelScalingOwnedBy] != "svc-0-decode" ||
		l[LabelInferService] != "svc-0" || l[LabelInstanceSet] != "decode" {
		t.Errorf("labels %v", l)
	}
	if _, ok := l[LabelInstanceIndex]; ok {
		t.Errorf("labels %v carry an instance index", l)
	}
	if hpa.Annotations[AnnotationSchedulePolicy] != "chip8-node8" || hpa.Spec.ScaleTargetRef.Name != "svc-0-decode" {
		t.Errorf("annotations %v, scaleTargetRef %+v", hpa.Annotations, hpa.Spec.ScaleTargetRef)
	}
	spec.ScalingPolicy = nil
	if st, err := r.reconcileHPA(context.Background(), ist, &spec); err != nil || st != nil {
		t.Fatalf("without the policy: %+v, %v", st, err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(hpa), hpa); client.IgnoreNotFound(err) != nil ||
		err == nil {
		t.Errorf("the HPA of a role without the policy is still there (%v)", err)
	}
}

// Models Ascend/mind-cluster component/infer-operator/pkg/controller/workload/podgroup_manager.go,
// createPodGroupForInstance (a typed PodGroup, its status always encoded) and the typed round trip of roles in the
// InferServiceSet and InferService controllers (pkg/api/v1/instanceset_types.go, ServiceSpec; cosmetic): a PodGroup
// is created with `status: {}`; role Services reach InferService and InstanceSet specs with `metadata: {}`, and that
// difference from the set's template makes no update loop.
func TestTypedRoundTripLeftovers(t *testing.T) {
	pg := newPodGroup(testInstanceSet("decode", true, testRole(1, 2)),
		instance{namespace: testNS, service: "svc-0", role: "decode"}, 2, &corev1.PodTemplateSpec{})
	if st, ok := pg.Object["status"].(map[string]any); !ok || len(st) != 0 {
		t.Errorf("PodGroup status %v, want {}", pg.Object["status"])
	}

	role := testRole(1, 1)
	role["services"] = []any{map[string]any{"name": "infer", "spec": map[string]any{}}}
	iss := New(InferServiceSetGVK)
	iss.SetNamespace(testNS)
	iss.SetName("svc")
	iss.Object["spec"] = map[string]any{"replicas": int64(1), "template": map[string]any{"roles": []any{role}}}
	c := testClient(t, nil, iss)
	setReconciler := &inferServiceSetReconciler{client: c}
	for range 2 {
		if _, err := setReconciler.Reconcile(context.Background(),
			reconcile.Request{NamespacedName: client.ObjectKeyFromObject(iss)}); err != nil {
			t.Fatal(err)
		}
	}
	is := New(InferServiceGVK)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: "svc-0"}, is); err != nil {
		t.Fatal(err)
	}
	roles, _, _ := unstructured.NestedSlice(is.Object, "spec", "roles")
	entry := roles[0].(map[string]any)["services"].([]any)[0].(map[string]any)
	if m, ok := entry["metadata"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("InferService role Service %v, want metadata {}", entry)
	}
	if is.GetResourceVersion() != "1" {
		t.Errorf("the InferService was updated (resourceVersion %s): the set's reconcile does not settle",
			is.GetResourceVersion())
	}
	serviceReconciler := &inferServiceReconciler{client: c}
	if _, err := serviceReconciler.Reconcile(context.Background(),
		reconcile.Request{NamespacedName: client.ObjectKeyFromObject(is)}); err != nil {
		t.Fatal(err)
	}
	ist := New(InstanceSetGVK)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: "svc-0-decode"}, ist); err != nil {
		t.Fatal(err)
	}
	services, _, _ := unstructured.NestedSlice(ist.Object, "spec", "services")
	if m, ok := services[0].(map[string]any)["metadata"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("InstanceSet role Service %v, want metadata {}", services[0])
	}
}
