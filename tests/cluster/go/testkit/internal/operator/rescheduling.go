package operator

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The rescheduler is the real operator's instance-level fault handling (Ascend/mind-cluster
// component/infer-operator/pkg/controller/rescheduling/rescheduling.go, the version whose handlePodDelete checks
// isGangScheduled; "rescheduling.go" below). Two pod events record a fault of the pod's workload
// "<InferService>-<role>-<index>":
//   - the final deletion of a pod of a gang-scheduled InstanceSet (any deletion: scale-in, a node lost, a pod
//     deleted by hand, the operator's own rebuild);
//   - an update leaving a pod annotated huawei.com/pod-status=Unhealthy* (gang or not); a business fault (status
//     ending in "pod-failed") only with a valid fault-retry-times label, and it spends one of those retries.
//
// A new record marks the workload with the deleting-trigger annotation; that update makes the InstanceSet
// controller reconcile, and its first step (doRescheduling) deletes every workload of the InstanceSet that has a
// record, then forgets those records. The next reconcile creates the workload again. The records live only in the
// operator's memory: they are forgotten when a rescheduling found the workload, when the InstanceSet is seen
// being deleted (read with a DeletionTimestamp; not when a background delete just removes it), and when the
// operator restarts. A record whose workload is already gone (a scale-in) therefore waits for the next workload of
// that name, and rebuilds it: the loop the real operator showed on a local cluster (a new gang StatefulSet deleted
// and made again about every 10 s, its pods' grace period).
//
// The newer pod-level branch (pod label pod-rescheduling=on: delete the faulty pod alone) is not modelled:
// kubectl-mindie never sets that label on infer-operator pods (only on AIBrix StormService pods). Neither is
// deletePodsForExternalRescheduling (workload_common.go), which acts only on fault-scheduling values external-*
// that kubectl-mindie never renders.
type rescheduler struct {
	client client.Client
	mu     sync.Mutex
	// faults: the pod-status annotation of the pod that faulted each workload ("" for a plain deletion).
	faults map[faultKey]string
	// retries: what is left of a workload's business-fault retries (set from the pod's label at its first one).
	retries map[faultKey]int
}

// faultKey is a workload (namespace and name) and the InstanceSet it belongs to, as the real records key them.
type faultKey struct {
	namespace   string
	workload    string
	instanceSet string
}

func newRescheduler(c client.Client) *rescheduler {
	return &rescheduler{client: c, faults: map[faultKey]string{}, retries: map[faultKey]int{}}
}

// watchPods registers the pod handlers (models rescheduling.go SetupWithManager: update and delete events of the
// operator's pod informer, whose cache holds only pods carrying the operator label).
func (r *rescheduler) watchPods(ctx context.Context, pods cache.Informers) error {
	informer, err := pods.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, newObj any) { r.onPodUpdate(newObj) },
		DeleteFunc: r.onPodDelete,
	})
	return err
}

// cleanupInstanceSet forgets every record of InstanceSet `name`, in every namespace as the real one does (models
// rescheduling.go CleanupWithInstanceSetDeletion, called by the InstanceSet reconcile that reads it with a
// DeletionTimestamp; a reconcile that finds it gone calls nothing).
func (r *rescheduler) cleanupInstanceSet(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.retries {
		if k.instanceSet == name {
			delete(r.retries, k)
		}
	}
	for k := range r.faults {
		if k.instanceSet == name {
			delete(r.faults, k)
		}
	}
}

// onPodUpdate records an Unhealthy pod's fault (models rescheduling.go handlePodUpdate).
func (r *rescheduler) onPodUpdate(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !faultPod(pod) {
		return
	}
	if err := r.processFault(context.Background(), pod); err != nil {
		klog.Errorf("rescheduler: fault of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// onPodDelete records the deletion of a gang instance's pod (models rescheduling.go handlePodDelete and
// isGangScheduled). A tombstone (a deletion the informer missed) is not a *Pod and is ignored, as there.
func (r *rescheduler) onPodDelete(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !inferPod(pod) {
		return
	}
	ctx := context.Background()
	if !r.gangScheduled(ctx, pod) {
		klog.V(1).Infof("rescheduler: pod %s/%s deleted, its InstanceSet is not gang-scheduled", pod.Namespace, pod.Name)
		return
	}
	klog.Infof("rescheduler: pod %s/%s of a gang instance deleted: its workload is rebuilt", pod.Namespace, pod.Name)
	if err := r.processFault(ctx, pod); err != nil {
		klog.Errorf("rescheduler: deletion of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// inferPod: the operator label "true" and non-empty InferService, role and index labels (models rescheduling.go
// isValidInferPod).
func inferPod(pod *corev1.Pod) bool {
	l := pod.Labels
	return l[LabelOperator] == "true" && l[LabelInferService] != "" && l[LabelInstanceSet] != "" &&
		l[LabelInstanceIndex] != ""
}

// faultPod: an operator pod whose pod-status annotation starts with "Unhealthy", not being deleted; a business
// fault needs a fault-retry-times label that is a number ≥ 0 (models rescheduling.go isValidFaultPod).
func faultPod(pod *corev1.Pod) bool {
	if !inferPod(pod) {
		return false
	}
	status, ok := pod.Annotations[AnnotationPodStatus]
	if !ok || !strings.HasPrefix(status, unhealthyStatusPrefix) {
		return false
	}
	if strings.HasSuffix(status, businessFaultSuffix) {
		v, ok := pod.Labels[LabelFaultRetryTimes]
		if !ok {
			return false
		}
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return false
		}
	}
	return pod.DeletionTimestamp == nil || pod.DeletionTimestamp.IsZero()
}

// podFault is the record key of a pod's workload (models rescheduling.go getWorkLoadNameAndInstanceSetName).
func podFault(pod *corev1.Pod) faultKey {
	service, role := pod.Labels[LabelInferService], pod.Labels[LabelInstanceSet]
	return faultKey{
		namespace:   pod.Namespace,
		workload:    service + "-" + role + "-" + pod.Labels[LabelInstanceIndex],
		instanceSet: service + "-" + role,
	}
}

// gangScheduled reads the pod's InstanceSet (from the cache): true when it exists with gang-schedule "true"
// (models rescheduling.go isGangScheduled). A pod whose InstanceSet is gone (a deleted deployment) is not.
func (r *rescheduler) gangScheduled(ctx context.Context, pod *corev1.Pod) bool {
	ist := New(InstanceSetGVK)
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: podFault(pod).instanceSet}, ist); err != nil {
		klog.V(1).Infof("rescheduler: InstanceSet of pod %s/%s: %v", pod.Namespace, pod.Name, err)
		return false
	}
	return ist.GetLabels()[LabelGangSchedule] == "true"
}

// processFault records the fault and, when it is the workload's first, marks the workload (models rescheduling.go
// processFaultEvent, instance-level branch). The record is kept even when the InstanceSet cannot be read.
func (r *rescheduler) processFault(ctx context.Context, pod *corev1.Pod) error {
	key := podFault(pod)
	if r.record(pod, key) {
		return nil
	}
	ist := New(InstanceSetGVK)
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.instanceSet}, ist); err != nil {
		return fmt.Errorf("failed to get instance set %s/%s: %w, rescheduling may not work", key.namespace,
			key.instanceSet, err)
	}
	if err := r.markWorkload(ctx, ist, pod); err != nil {
		return fmt.Errorf("failed to trigger instance set reconcile for pod %s/%s: %w, rescheduling may not work",
			pod.Namespace, pod.Name, err)
	}
	return nil
}

// record stores the workload's fault unless one is stored already (then it returns true: only a workload's
// first fault acts). A business fault also stores the workload's retry budget, from the pod's label, once
// (models rescheduling.go recordWorkLoadFault).
func (r *rescheduler) record(pod *corev1.Pod, key faultKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.faults[key]; ok {
		klog.V(1).Infof("rescheduler: workload %s/%s already has a fault recorded", key.namespace, key.workload)
		return true
	}
	reason := pod.Annotations[AnnotationPodStatus]
	r.faults[key] = reason
	if strings.HasSuffix(reason, businessFaultSuffix) {
		if _, ok := r.retries[key]; !ok {
			n, _ := strconv.Atoi(pod.Labels[LabelFaultRetryTimes])
			r.retries[key] = n
		}
	}
	klog.Infof("rescheduler: recorded fault %q of workload %s/%s", reason, key.namespace, key.workload)
	return false
}

// markWorkload sets the deleting-trigger annotation on the pod's workload, found by the pod's four indexer labels
// in the cache; the update is what makes the InstanceSet controller reconcile. No workload (a scale-in deleted
// it) is no error: nothing is marked and the record waits (models rescheduling.go triggerInstanceSetReconcile
// and the handlers' UpdateWorkLoad).
func (r *rescheduler) markWorkload(ctx context.Context, ist *unstructured.Unstructured, pod *corev1.Pod) error {
	kind, err := workloadKind(ist)
	if err != nil {
		return err
	}
	list := newWorkloadList(kind)
	selector := client.MatchingLabels(indexLabels(nil, pod.Labels[LabelInferService], pod.Labels[LabelInstanceSet],
		pod.Labels[LabelInstanceIndex]))
	if err := r.client.List(ctx, list, client.InNamespace(pod.Namespace), selector); err != nil {
		return err
	}
	objs, _ := workloadItems(list)
	for _, w := range objs {
		annotations := w.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationDeletingTrigger] = "true"
		w.SetAnnotations(annotations)
		if err := r.client.Update(ctx, w, client.FieldOwner(Component)); err != nil {
			return fmt.Errorf("failed to update workload %s/%s: %w", w.GetNamespace(), w.GetName(), err)
		}
	}
	return nil
}

// reschedule deletes the InstanceSet's workloads that have a fault recorded, and forgets those records (models
// rescheduling.go DoRescheduling). A recorded business fault whose retries are spent keeps its workload, but its
// record is forgotten all the same. With the Priority strategy and a priority on the InstanceSet, the unready
// workloads of InstanceSets of lower priority (a larger number) go first. It returns the other InstanceSets
// whose workloads it deleted. A failed delete keeps every record (the caller logs it and reconciles on).
func (r *rescheduler) reschedule(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec) (
	[]*unstructured.Unstructured, error) {
	kind, err := role.Workload.handlerKind()
	if err != nil {
		return nil, err
	}
	found, err := r.recordedWorkloads(ctx, ist, kind)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	others, err := r.deleteLowerPriority(ctx, ist, role, kind)
	if err != nil {
		return nil, fmt.Errorf("failed to process priority setting when rescheduling: %w", err)
	}
	if err := r.deleteRecorded(ctx, ist, kind, found); err != nil {
		return nil, fmt.Errorf("failed to delete fault workloads: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range found {
		delete(r.faults, k)
	}
	return others, nil
}

// recordedWorkloads: the InstanceSet's workloads (in the cache) that have a record (models rescheduling.go
// getFaultWorkLoad). Records of workloads that do not exist are not returned, so they stay.
func (r *rescheduler) recordedWorkloads(ctx context.Context, ist *unstructured.Unstructured, kind string) (
	map[faultKey]string, error) {
	list := newWorkloadList(kind)
	if err := r.client.List(ctx, list, client.InNamespace(ist.GetNamespace()), instanceSetSelector(ist)); err != nil {
		return nil, fmt.Errorf("failed to list all workload for instanceSet %s/%s: %w", ist.GetNamespace(),
			ist.GetName(), err)
	}
	objs, _ := workloadItems(list)
	r.mu.Lock()
	defer r.mu.Unlock()
	found := map[faultKey]string{}
	for _, w := range objs {
		key := faultKey{namespace: w.GetNamespace(), workload: w.GetName(), instanceSet: ist.GetName()}
		if reason, ok := r.faults[key]; ok {
			found[key] = reason
		}
	}
	return found, nil
}

// deleteRecorded deletes the recorded workloads, except a business fault's whose retries are spent, stopping at
// the first failed delete (NotFound included, as the handlers' DeleteWorkLoad); then it spends one retry of each
// business fault that had one (models rescheduling.go deleteFaultWorkLoad).
func (r *rescheduler) deleteRecorded(ctx context.Context, ist *unstructured.Unstructured, kind string,
	found map[faultKey]string) error {
	list := newWorkloadList(kind)
	if err := r.client.List(ctx, list, client.InNamespace(ist.GetNamespace()), instanceSetSelector(ist)); err != nil {
		return fmt.Errorf("failed to list %s work loads: %w", strings.ToLower(kind), err)
	}
	objs, _ := workloadItems(list)
	for _, w := range objs {
		key := faultKey{namespace: w.GetNamespace(), workload: w.GetName(), instanceSet: ist.GetName()}
		if !r.rebuilds(key, found) {
			continue
		}
		if err := r.client.Delete(ctx, w); err != nil {
			return fmt.Errorf("failed to delete %s work load %s/%s: %w", strings.ToLower(kind), w.GetNamespace(),
				w.GetName(), err)
		}
		klog.Infof("rescheduler: deleted %s %s/%s to rebuild it", kind, w.GetNamespace(), w.GetName())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, reason := range found {
		if strings.HasSuffix(reason, businessFaultSuffix) && r.retries[key] > 0 {
			r.retries[key]--
		}
	}
	return nil
}

// rebuilds: the workload has a record, and a business fault still has a retry.
func (r *rescheduler) rebuilds(key faultKey, found map[faultKey]string) bool {
	reason, ok := found[key]
	if !ok || !strings.HasSuffix(reason, businessFaultSuffix) {
		return ok
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries[key] > 0
}

// deleteLowerPriority: with the Priority strategy and spec.priority set, the InstanceSets of the same InferService
// whose priority is a larger number and whose status has fewer ready than wanted lose their unready workloads
// (looked up with this InstanceSet's workload kind, as the real one does) (models rescheduling.go
// processPrioritySetting and deleteOtherWorkLoad).
func (r *rescheduler) deleteLowerPriority(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec,
	kind string) ([]*unstructured.Unstructured, error) {
	if ist.GetLabels()[LabelPriorityStrategy] != StrategyPriority || role.Priority == nil {
		return nil, nil
	}
	service, ok := ist.GetLabels()[LabelInferService]
	if !ok {
		return nil, fmt.Errorf("instance set does not have infer service label: %v", ist.GetLabels())
	}
	sets := NewList(InstanceSetGVK)
	if err := r.client.List(ctx, sets, client.InNamespace(ist.GetNamespace()),
		client.MatchingLabels{LabelInferService: service}); err != nil {
		return nil, fmt.Errorf("failed to list InstanceSet for InferService %s/%s: %w at infer rescheduling",
			ist.GetNamespace(), service, err)
	}
	var lower []*unstructured.Unstructured
	for i := range sets.Items {
		other := &sets.Items[i]
		var spec roleSpec
		_, _ = decodeField(other, &spec, "spec")
		st := currentStatus(other)
		if spec.Priority != nil && *spec.Priority > *role.Priority && st.ReadyReplicas < st.Replicas {
			lower = append(lower, other)
		}
	}
	for _, other := range lower {
		list := newWorkloadList(kind)
		if err := r.client.List(ctx, list, client.InNamespace(other.GetNamespace()), instanceSetSelector(other)); err != nil {
			return nil, err
		}
		objs, ready := workloadItems(list)
		for i, w := range objs {
			if ready[i] {
				continue
			}
			if err := r.client.Delete(ctx, w); err != nil {
				return nil, fmt.Errorf("failed to delete unready workload instance %s/%s: %w",
					other.GetNamespace(), other.GetName(), err)
			}
		}
	}
	return lower, nil
}
