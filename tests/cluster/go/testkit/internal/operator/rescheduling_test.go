package operator

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func recorded(r *rescheduler, workload string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.faults[faultKey{namespace: testNS, workload: workload, instanceSet: "svc-0-decode"}]
	return ok
}

func marked(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	sts := getWorkload(t, c, name)
	return sts != nil && sts.Annotations[AnnotationDeletingTrigger] == "true"
}

// Models rescheduling.go handlePodDelete + isGangScheduled + recordWorkLoadFault + triggerInstanceSetReconcile (and
// the handlers' UpdateWorkLoad): deleting one pod of a gang instance records a fault of its workload and marks the
// workload with the deleting-trigger annotation; a second pod of the same workload adds nothing (only the first
// fault acts).
func TestGangPodDeletionMarksItsWorkload(t *testing.T) {
	updates := 0
	counter := &interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object,
		opts ...client.UpdateOption) error {
		updates++
		return c.Update(ctx, obj, opts...)
	}}
	c := testClient(t, counter, testInstanceSet("decode", true, testRole(2, 2)), testWorkload("decode", 0),
		testWorkload("decode", 1))
	r := newRescheduler(c)
	r.onPodDelete(testPod("decode", 1, 0))
	if !recorded(r, "svc-0-decode-1") || !marked(t, c, "svc-0-decode-1") {
		t.Fatalf("decode-1: recorded %v, marked %v; want both", recorded(r, "svc-0-decode-1"),
			marked(t, c, "svc-0-decode-1"))
	}
	if recorded(r, "svc-0-decode-0") || marked(t, c, "svc-0-decode-0") {
		t.Error("the other instance's workload was recorded or marked")
	}
	r.onPodDelete(testPod("decode", 1, 1))
	if updates != 1 {
		t.Errorf("%d workload updates for two pods of one workload, want 1", updates)
	}
}

// Models rescheduling.go handlePodDelete (isGangScheduled false, isValidInferPod false): a pod of a role that is not
// gang-scheduled, a pod whose InstanceSet is gone (a deleted deployment) and a pod without the operator's labels
// are left to their StatefulSet.
func TestPodDeletionOutsideGangInstancesIsIgnored(t *testing.T) {
	c := testClient(t, nil, testInstanceSet("prefill", false, testRole(1, 1)), testWorkload("prefill", 0),
		testWorkload("decode", 0))
	r := newRescheduler(c)
	r.onPodDelete(testPod("prefill", 0, 0))
	r.onPodDelete(testPod("decode", 0, 0)) // InstanceSet svc-0-decode does not exist
	stranger := testPod("decode", 0, 1)
	stranger.Labels[LabelOperator] = "false"
	r.onPodDelete(stranger)
	if len(r.faults) != 0 || marked(t, c, "svc-0-prefill-0") || marked(t, c, "svc-0-decode-0") {
		t.Errorf("records %v; want none and no marked workload", r.faults)
	}
}

// Models rescheduling.go DoRescheduling (getFaultWorkLoad, deleteFaultWorkLoad, then the records' clearing) called
// from instanceset_controller.go Reconcile: the InstanceSet reconcile that follows the mark deletes the recorded
// workload, forgets the record and makes the instance again (here in the same pass: the fake client has no cache).
func TestMarkedWorkloadIsRebuiltByTheInstanceSetReconcile(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("decode", true, testRole(1, 2))
	c := testClient(t, deleteCounter(counts), ist)
	r := testReconciler(c)
	reconcileOnce(t, r, ist)
	if getWorkload(t, c, "svc-0-decode-0") == nil {
		t.Fatal("the first reconcile made no StatefulSet")
	}
	r.rescheduler.onPodDelete(testPod("decode", 0, 1))
	if !marked(t, c, "svc-0-decode-0") {
		t.Fatal("the pod deletion did not mark the workload")
	}
	reconcileOnce(t, r, ist)
	if counts["StatefulSet"] != 1 {
		t.Errorf("%d StatefulSet deletes, want 1", counts["StatefulSet"])
	}
	if recorded(r.rescheduler, "svc-0-decode-0") {
		t.Error("the rescheduling kept the record of the workload it rebuilt")
	}
	if sts := getWorkload(t, c, "svc-0-decode-0"); sts == nil || sts.Annotations[AnnotationDeletingTrigger] != "" {
		t.Errorf("after the rebuild: %v; want a new StatefulSet without the trigger annotation", sts)
	}
	reconcileOnce(t, r, ist)
	if counts["StatefulSet"] != 1 {
		t.Errorf("a reconcile without a record deleted again (%d deletes)", counts["StatefulSet"])
	}
}

// Models Ascend/mind-cluster component/infer-operator/pkg/controller/rescheduling/rescheduling.go, handlePodDelete →
// recordWorkLoadFault with the workload already gone, and DoRescheduling's getFaultWorkLoad, which only clears
// records of workloads it finds (the real operator did so on a local cluster): the pods of a gang instance removed
// by a scale-in leave a record; nothing is marked; the next workload of that name, made by a scale-out, is deleted
// and made again.
func TestScaleInRecordRebuildsTheNextWorkloadOfThatName(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("decode", true, testRole(1, 2))
	c := testClient(t, deleteCounter(counts), ist, testWorkload("decode", 0))
	r := testReconciler(c)
	// Scale-in to 1 deleted decode-1; its pods finish terminating afterwards.
	r.rescheduler.onPodDelete(testPod("decode", 1, 0))
	if !recorded(r.rescheduler, "svc-0-decode-1") {
		t.Fatal("no record for the removed instance")
	}
	reconcileOnce(t, r, ist)
	if !recorded(r.rescheduler, "svc-0-decode-1") || counts["StatefulSet"] != 0 {
		t.Fatalf("a reconcile without decode-1: record kept %v, deletes %d; want kept, 0",
			recorded(r.rescheduler, "svc-0-decode-1"), counts["StatefulSet"])
	}
	// Scale-out to 2: the reconcile makes decode-1, the next one (its status update) finds the record.
	scaled := New(InstanceSetGVK)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(ist), scaled); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(scaled.Object, int64(2), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(context.Background(), scaled); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, ist)
	reconcileOnce(t, r, ist)
	if counts["StatefulSet"] != 1 || recorded(r.rescheduler, "svc-0-decode-1") {
		t.Errorf("after the scale-out: %d deletes, record kept %v; want the new decode-1 deleted once and the record "+
			"gone", counts["StatefulSet"], recorded(r.rescheduler, "svc-0-decode-1"))
	}
	if getWorkload(t, c, "svc-0-decode-1") == nil {
		t.Error("decode-1 was not made again")
	}
}

// Models rescheduling.go CleanupWithInstanceSetDeletion, called by Ascend/mind-cluster
// component/infer-operator/pkg/controller/v1/instanceset_controller.go, Reconcile for an InstanceSet it reads with a
// DeletionTimestamp (held by a finalizer, or a foreground delete): its records go, in every namespace, and only its
// own.
func TestInstanceSetDeletionClearsItsRecords(t *testing.T) {
	ist := testInstanceSet("decode", true, testRole(1, 2))
	ist.SetFinalizers([]string{"test/hold"})
	c := testClient(t, nil, ist, testInstanceSet("prefill", true, testRole(1, 2)))
	if err := c.Delete(context.Background(), ist); err != nil {
		t.Fatal(err)
	}
	r := testReconciler(c)
	r.rescheduler.onPodDelete(testPod("prefill", 0, 0))
	r.rescheduler.faults[faultKey{namespace: testNS, workload: "svc-0-decode-0", instanceSet: "svc-0-decode"}] = ""
	r.rescheduler.faults[faultKey{namespace: "other", workload: "svc-0-decode-1", instanceSet: "svc-0-decode"}] = ""
	r.rescheduler.retries[faultKey{namespace: testNS, workload: "svc-0-decode-0", instanceSet: "svc-0-decode"}] = 2
	reconcileOnce(t, r, ist)
	if len(r.rescheduler.faults) != 1 || len(r.rescheduler.retries) != 0 {
		t.Errorf("records %v, retries %v; want only prefill's record", r.rescheduler.faults, r.rescheduler.retries)
	}
}

// Models Ascend/mind-cluster component/infer-operator/pkg/controller/v1/instanceset_controller.go, Reconcile (the
// version with the rescheduler), which returns on NotFound and calls CleanupWithInstanceSetDeletion only for an
// InstanceSet it reads with a DeletionTimestamp: a plain (background) delete of an InstanceSet without finalizers
// makes it disappear, so its records stay. Pods deleted after it is gone record nothing (isGangScheduled cannot
// read it). A new InstanceSet of the same name then has the workload of the kept record rebuilt. (A later upstream
// instanceset_controller_test.go, TestInstanceSetPredicate, expects an InstanceSet predicate whose DeleteFunc
// cleans up too; this model follows the Reconcile-only version.)
func TestInstanceSetBackgroundDeleteKeepsItsRecords(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("decode", true, testRole(2, 2))
	c := testClient(t, deleteCounter(counts), ist)
	r := testReconciler(c)
	r.rescheduler.onPodDelete(testPod("decode", 0, 0)) // while the InstanceSet exists: recorded
	if !recorded(r.rescheduler, "svc-0-decode-0") {
		t.Fatal("no record for a gang pod deleted while its InstanceSet exists")
	}
	if err := c.Delete(context.Background(), ist); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, ist) // NotFound
	r.rescheduler.onPodDelete(testPod("decode", 1, 0))
	if !recorded(r.rescheduler, "svc-0-decode-0") || recorded(r.rescheduler, "svc-0-decode-1") {
		t.Fatalf("after the delete: records %v; want decode-0's kept and none for decode-1", r.rescheduler.faults)
	}
	again := testInstanceSet("decode", true, testRole(2, 2))
	again.SetUID("uid-decode-again")
	if err := c.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, again) // makes decode-0 and decode-1
	reconcileOnce(t, r, again) // finds decode-0's record
	if counts["StatefulSet"] != 1 || recorded(r.rescheduler, "svc-0-decode-0") {
		t.Errorf("new InstanceSet of that name: %d StatefulSet deletes, record kept %v; want decode-0 rebuilt once",
			counts["StatefulSet"], recorded(r.rescheduler, "svc-0-decode-0"))
	}
}

// Models the records being rescheduling.go's Rescheduler fields (memory only; NewRescheduler starts them empty):
// the one trace a fault leaves in the cluster, the deleting-trigger annotation on its workload, is no record. An
// operator restarted after marking a workload leaves it alone; the operator that marked it rebuilds it.
func TestRestartedOperatorLeavesAMarkedWorkload(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("decode", true, testRole(1, 2))
	c := testClient(t, deleteCounter(counts), ist, testWorkload("decode", 0))
	before := testReconciler(c)
	before.rescheduler.onPodDelete(testPod("decode", 0, 0))
	if !marked(t, c, "svc-0-decode-0") {
		t.Fatal("the pod deletion did not mark the workload")
	}
	restarted := testReconciler(c)
	reconcileOnce(t, restarted, ist)
	if counts["StatefulSet"] != 0 || !marked(t, c, "svc-0-decode-0") {
		t.Fatalf("restarted operator: %d StatefulSet deletes; want the marked workload left as it is",
			counts["StatefulSet"])
	}
	reconcileOnce(t, before, ist)
	if counts["StatefulSet"] != 1 {
		t.Errorf("operator holding the record: %d StatefulSet deletes, want 1", counts["StatefulSet"])
	}
}

// Models rescheduling.go handlePodUpdate + isValidFaultPod: a pod annotated huawei.com/pod-status=Unhealthy marks its
// workload whether or not the role is gang-scheduled, and the rescheduling rebuilds it. Pods being deleted, or
// without an Unhealthy status, are not faults.
func TestUnhealthyPodRebuildsItsWorkload(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("prefill", false, testRole(1, 1))
	c := testClient(t, deleteCounter(counts), ist)
	r := testReconciler(c)
	reconcileOnce(t, r, ist)
	healthy := testPod("prefill", 0, 0)
	healthy.Annotations = map[string]string{AnnotationPodStatus: "Healthy"}
	leaving := testPod("prefill", 0, 0)
	leaving.Annotations = map[string]string{AnnotationPodStatus: "Unhealthy"}
	leaving.DeletionTimestamp = ptr.To(metav1.Now())
	for _, p := range []any{healthy, testPod("prefill", 0, 0), leaving, "not a pod"} {
		r.rescheduler.onPodUpdate(p)
	}
	if len(r.rescheduler.faults) != 0 {
		t.Fatalf("records %v from pods that are no faults", r.rescheduler.faults)
	}
	sick := testPod("prefill", 0, 0)
	sick.Annotations = map[string]string{AnnotationPodStatus: "Unhealthy"}
	r.rescheduler.onPodUpdate(sick)
	if !marked(t, c, "svc-0-prefill-0") {
		t.Fatal("an Unhealthy pod did not mark its workload")
	}
	reconcileOnce(t, r, ist)
	if counts["StatefulSet"] != 1 {
		t.Errorf("%d deletes, want the workload rebuilt once", counts["StatefulSet"])
	}
}

// Models rescheduling.go isValidFaultPod (a business fault needs fault-retry-times), recordWorkLoadFault (the
// budget is read once) and deleteFaultWorkLoad (a spent budget keeps the workload; each rebuild spends one): with
// fault-retry-times 1 the first business fault rebuilds the workload, the second does not, and its record is
// forgotten all the same.
func TestBusinessFaultsSpendTheRetryBudget(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("prefill", false, testRole(1, 1))
	c := testClient(t, deleteCounter(counts), ist)
	r := testReconciler(c)
	reconcileOnce(t, r, ist)
	fault := func(label string) {
		p := testPod("prefill", 0, 0)
		p.Annotations = map[string]string{AnnotationPodStatus: "Unhealthy-" + businessFaultSuffix}
		if label != "" {
			p.Labels[LabelFaultRetryTimes] = label
		}
		r.rescheduler.onPodUpdate(p)
	}
	fault("")   // no label: not a fault
	fault("-1") // not a budget
	if len(r.rescheduler.faults) != 0 {
		t.Fatalf("records %v from business faults without a valid fault-retry-times", r.rescheduler.faults)
	}
	fault("1")
	reconcileOnce(t, r, ist)
	if counts["StatefulSet"] != 1 {
		t.Fatalf("first business fault: %d deletes, want 1", counts["StatefulSet"])
	}
	fault("1")
	reconcileOnce(t, r, ist)
	key := faultKey{namespace: testNS, workload: "svc-0-prefill-0", instanceSet: "svc-0-prefill"}
	if counts["StatefulSet"] != 1 || len(r.rescheduler.faults) != 0 || r.rescheduler.retries[key] != 0 {
		t.Errorf("second business fault: %d deletes, records %v, budget %d; want 1, none, 0", counts["StatefulSet"],
			r.rescheduler.faults, r.rescheduler.retries[key])
	}
}

// Models rescheduling.go processPrioritySetting + deleteOtherWorkLoad: with the Priority strategy, rebuilding a
// workload of an InstanceSet also deletes the unready workloads of the InferService's InstanceSets of lower
// priority (a larger number) that report fewer ready than wanted; ready ones and higher priorities stay.
func TestPriorityReschedulingDeletesLowerPriorityUnreadyWorkloads(t *testing.T) {
	withPriority := func(role string, priority, replicas, ready int64) *unstructured.Unstructured {
		spec := testRole(replicas, 2)
		spec["priority"] = priority
		ist := testInstanceSet(role, false, spec)
		labels := ist.GetLabels()
		labels[LabelPriorityStrategy] = StrategyPriority
		ist.SetLabels(labels)
		ist.Object["status"] = map[string]any{"replicas": replicas, "readyReplicas": ready}
		return ist
	}
	faulty := withPriority("decode", 2, 1, 1)
	lower := withPriority("prefill", 3, 2, 1) // one of two ready
	higher := withPriority("mixed", 1, 1, 0)  // unready, but of a higher priority
	readyLower := testWorkload("prefill", 0)
	readyLower.Status = appsv1.StatefulSetStatus{ReadyReplicas: 2, UpdatedReplicas: 2}
	c := testClient(t, nil, faulty, lower, higher, testWorkload("decode", 0), readyLower, testWorkload("prefill", 1),
		testWorkload("mixed", 0))
	r := testReconciler(c)
	sick := testPod("decode", 0, 0)
	sick.Annotations = map[string]string{AnnotationPodStatus: "Unhealthy"}
	r.rescheduler.onPodUpdate(sick)
	var role roleSpec
	if _, err := decodeField(faulty, &role, "spec"); err != nil {
		t.Fatal(err)
	}
	others, err := r.rescheduler.reschedule(context.Background(), faulty, &role)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"svc-0-decode-0": false, "svc-0-prefill-0": true,
		"svc-0-prefill-1": false, "svc-0-mixed-0": true} {
		if got := getWorkload(t, c, name) != nil; got != want {
			t.Errorf("%s exists %v, want %v", name, got, want)
		}
	}
	if len(others) != 1 || others[0].GetName() != "svc-0-prefill" {
		t.Errorf("InstanceSets touched %d, want svc-0-prefill", len(others))
	}
}
