package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event reasons of the InstanceSet controller (instanceset_controller.go).
const (
	ReasonValidateError      = "ValidateError"
	ReasonServiceCreateError = "ServiceCreateError"
)

// requeueInterval is how soon a reconcile that failed to create an instance runs again (the real
// DefaultReEnqueueInterval); the status is written first (instanceset_controller.go Reconcile).
const requeueInterval = time.Second

// maxInstances bounds the workloads of one InstanceSet: a test instrument must not create without bound when a
// hand-edited InstanceSet asks for millions (the real operator has no such limit).
const maxInstances = 1024

// requeueError is a reconcile failure after which the status is still written and the InstanceSet requeued after
// requeueInterval (the real operator's RequeueError): a failed instance create.
type requeueError struct{ err error }

func (e *requeueError) Error() string { return e.err.Error() }
func (e *requeueError) Unwrap() error { return e.err }

// errNoSchedule: the InstanceSet's priority-scheduling-strategy label is absent or unknown, so no workload is created
// and no status written (schedule/priority_scheduling.go ShouldSchedule). Not retried: adding the label is an update of
// the InstanceSet, which reconciles it.
var errNoSchedule = errors.New("unknown scheduling strategy")

// instanceSetReconciler turns an InstanceSet into its role Services, one workload per instance (with its
// per-instance Service, and its PodGroup for gang roles) and, for HPA roles, an HPA (instanceset_controller.go and
// the workload handlers).
type instanceSetReconciler struct {
	client    client.Client
	apiReader client.Reader
	recorder  record.EventRecorder
	// rescheduler: the fault records and the rebuild of faulty workloads (rescheduling.go).
	rescheduler *rescheduler
	// supportPodGroup: Volcano's PodGroup CRD was established when the operator started (SetupWithManager).
	supportPodGroup bool
	// hpaServed: autoscaling/v2 HorizontalPodAutoscalers were served when the operator started.
	hpaServed bool
}

func (r *instanceSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ist := New(InstanceSetGVK)
	if err := r.client.Get(ctx, req.NamespacedName, ist); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// An InstanceSet seen being deleted (foreground deletion, a finalizer) takes its fault records with it. One that
	// is simply gone (a background delete without finalizers: NotFound above) leaves them, as upstream.
	if ist.GetDeletionTimestamp() != nil {
		r.rescheduler.cleanupInstanceSet(ist.GetName())
		return ctrl.Result{}, nil
	}
	var role roleSpec
	if _, err := decodeField(ist, &role, "spec"); err != nil {
		r.refuse(ist, fmt.Sprintf("spec is not valid: %v", err))
		return ctrl.Result{}, nil
	}
	// A refusal is a ValidateError event and nothing else: no Services, workloads or status (validate, validateServices).
	if msg := r.validate(ist, &role); msg != "" {
		r.refuse(ist, msg)
		return ctrl.Result{}, nil
	}
	// Faulty workloads go first; whatever happens there, the reconcile goes on.
	r.doRescheduling(ctx, ist, &role)
	labels := ist.GetLabels()
	service, roleName := labels[LabelInferService], labels[LabelInstanceSet]
	replicas := int(*role.Replicas)

	scaling, err := r.reconcileHPA(ctx, ist, &role)
	if err != nil {
		return requeueOnConflict(err)
	}
	err = r.reconcileWorkloads(ctx, ist, &role, service, roleName, replicas)
	var requeue *requeueError
	switch {
	case err == nil || errors.As(err, &requeue):
		if serr := r.writeStatus(ctx, ist, &role, service, roleName, replicas, scaling); serr != nil {
			return requeueOnConflict(serr)
		}
		if requeue != nil {
			klog.Warningf("InstanceSet %s: %v; retrying in %s", req, requeue.err, requeueInterval)
			return ctrl.Result{RequeueAfter: requeueInterval}, nil
		}
		return ctrl.Result{}, nil
	case errors.Is(err, errNoSchedule):
		klog.Warningf("InstanceSet %s has no known %s label (%q): no workloads are created", req,
			LabelPriorityStrategy, labels[LabelPriorityStrategy])
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	default:
		// No status; retried with the controller's backoff.
		klog.Errorf("reconcile workloads of InstanceSet %s: %v", req, err)
		return ctrl.Result{}, err
	}
}

func (r *instanceSetReconciler) refuse(ist *unstructured.Unstructured, msg string) {
	klog.Errorf("InstanceSet %s/%s is invalid: %s", ist.GetNamespace(), ist.GetName(), msg)
	r.recorder.Event(ist, corev1.EventTypeWarning, ReasonValidateError, msg)
}

// doRescheduling runs the rescheduler for this InstanceSet and refreshes the status of the other InstanceSets
// whose unready workloads it deleted for priority; this InstanceSet's status is written at the end of the
// reconcile. A failure is only logged (models instanceset_controller.go doRescheduling).
func (r *instanceSetReconciler) doRescheduling(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec) {
	others, err := r.rescheduler.reschedule(ctx, ist, role)
	if err != nil {
		klog.Warningf("InstanceSet %s/%s rescheduling failed, continue to reconcile workloads: %v",
			ist.GetNamespace(), ist.GetName(), err)
		return
	}
	for _, other := range others {
		if err := r.refreshStatus(ctx, other); err != nil {
			klog.Warningf("update status of InstanceSet %s/%s after rescheduling: %v", other.GetNamespace(),
				other.GetName(), err)
		}
	}
}

// validate is the real operator's InstanceSet validation, in its order and with its messages: gang scheduling needs
// the PodGroup CRD, replicas must be set and not negative, the InferService and role labels must be there, every
// port of a NodePort role Service needs a nodePort, and the workload must be a Deployment or StatefulSet whose
// spec parses. It returns the refusal's message, "" when the InstanceSet is accepted (models
// instanceset_controller.go validate and validateServices, workload_reconciler.go Validate, the handlers'
// Validate).
func (r *instanceSetReconciler) validate(ist *unstructured.Unstructured, role *roleSpec) string {
	labels := ist.GetLabels()
	if labels[LabelGangSchedule] == "true" && !r.supportPodGroup {
		return "label gang-schedule is true, but PodGroup not supported now, please check if volcano installed in k8s"
	}
	if role.Replicas == nil {
		return "jobSpec is not valid: replicas cannot be nil"
	}
	if *role.Replicas < 0 {
		return fmt.Sprintf("jobSpec is not valid: replicas can not be negative num, but but got %d", *role.Replicas)
	}
	for _, key := range []string{LabelInferService, LabelInstanceSet} {
		if _, ok := labels[key]; !ok {
			return fmt.Sprintf("label <%s> is missing", key)
		}
	}
	for _, s := range role.Services {
		if s.Spec.Type != corev1.ServiceTypeNodePort {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.NodePort == 0 {
				return fmt.Sprintf("nodePort of service<%s> should config as non-zero", s.Name)
			}
		}
	}
	kind, err := role.Workload.handlerKind()
	if err != nil {
		return err.Error()
	}
	return validWorkloadSpec(kind, role.Spec)
}

// validWorkloadSpec: the role's spec must be there and decode as the kind's spec (the handlers'
// parseStatefulSetWithScheme / parseDeploymentWithScheme); "" when it does.
func validWorkloadSpec(kind string, spec json.RawMessage) string {
	if len(spec) == 0 {
		return "raw extension is empty"
	}
	var err error
	if kind == "StatefulSet" {
		err = json.Unmarshal(spec, &appsv1.StatefulSetSpec{})
	} else {
		err = json.Unmarshal(spec, &appsv1.DeploymentSpec{})
	}
	if err != nil {
		return fmt.Sprintf("failed to unmarshal RawExtension to %sSpec: %v", kind, err)
	}
	return ""
}

// reconcileWorkloads: delete the workloads (and per-instance Services) of indexes ≥ replicas, create the role Services,
// stopping at the first refused one (reconcileServices), then, when the scheduling strategy allows it, create each
// missing instance in ascending order, stopping at the first failure (reconcileWorkloadInstances). Existing objects are
// never updated.
func (r *instanceSetReconciler) reconcileWorkloads(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec,
	service, roleName string, replicas int) error {
	ns := ist.GetNamespace()
	selector := client.MatchingLabels{LabelInferService: service, LabelInstanceSet: roleName, LabelOperator: "true"}
	kind := role.Workload.Kind

	// 1. scale-in: workloads whose index is ≥ replicas, with their per-instance Services (not their PodGroups, D1).
	list := newWorkloadList(kind)
	if err := r.client.List(ctx, list, client.InNamespace(ns), selector); err != nil {
		return err
	}
	objs, _ := workloadItems(list)
	for _, w := range objs {
		if !beyond(w.GetLabels(), replicas) {
			continue
		}
		if err := r.client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			return err
		}
		klog.Infof("deleted %s %s/%s (scale-in to %d)", kind, ns, w.GetName(), replicas)
	}
	services := &corev1.ServiceList{}
	if err := r.client.List(ctx, services, client.InNamespace(ns), selector); err != nil {
		return err
	}
	for i := range services.Items {
		s := &services.Items[i]
		if !beyond(s.Labels, replicas) {
			continue
		}
		if err := r.client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			return &requeueError{err}
		}
		klog.Infof("deleted Service %s/%s (scale-in to %d)", ns, s.Name, replicas)
	}

	// 2. role Services, before any workload.
	offset := int32(0)
	if n, err := serviceIndex(service); err == nil {
		offset = int32(n)
	} else if len(role.Services) > 0 {
		return err
	}
	for _, entry := range role.Services {
		svc := newRoleService(ist, entry, service, roleName, offset)
		if err := r.createRoleService(ctx, ist, entry.Name, svc); err != nil {
			return err
		}
	}

	// 3. the scheduling strategy decides whether instances are created at all.
	switch ist.GetLabels()[LabelPriorityStrategy] {
	case StrategyParallel, StrategyPriority:
	default:
		return errNoSchedule
	}

	// 4. the instances, in ascending order.
	gang := ist.GetLabels()[LabelGangSchedule] == "true"
	if replicas > maxInstances {
		klog.Warningf("InstanceSet %s/%s asks for %d instances: only the first %d are created (a limit of this test "+
			"operator)", ns, ist.GetName(), replicas, maxInstances)
	}
	for k := 0; k < min(replicas, maxInstances); k++ {
		in := instance{namespace: ns, service: service, role: roleName, index: k}
		if err := r.ensureInstance(ctx, ist, role, in, gang); err != nil {
			return err
		}
	}
	return nil
}

// beyond reports whether an object's instance-index label is a number outside 0..replicas-1. Objects without the
// label, or whose label is no number (the role Services carry ""), are left alone.
func beyond(labels map[string]string, replicas int) bool {
	v, ok := labels[LabelInstanceIndex]
	if !ok {
		return false
	}
	k, err := strconv.Atoi(v)
	return err == nil && (k < 0 || k >= replicas)
}

// createRoleService creates a role Service unless it exists. The lookup is the label-filtered cache (main.go): a
// Service of that name without the operator's label looks missing, its create is refused (AlreadyExists) and reported
// like any other refusal: a ServiceCreateError event naming the role.services entry, and an error, so the reconcile is
// retried with the controller's backoff (models instanceset_controller.go checkOrCreateService).
func (r *instanceSetReconciler) createRoleService(ctx context.Context, ist *unstructured.Unstructured, entry string,
	svc *corev1.Service) error {
	existing := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(svc), existing)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	err = r.client.Create(ctx, svc, client.FieldOwner(Component))
	if err == nil {
		klog.Infof("created Service %s/%s", svc.Namespace, svc.Name)
		return nil
	}
	if apierrors.IsAlreadyExists(err) && r.ownedLive(ctx, ist, &corev1.Service{}, client.ObjectKeyFromObject(svc)) {
		return nil // ours, made by an earlier reconcile the cache has not seen yet
	}
	r.recorder.Event(ist, corev1.EventTypeWarning, ReasonServiceCreateError,
		fmt.Sprintf("Failed to create service %s: %v", entry, err))
	return fmt.Errorf("create service %s: %w", svc.Name, err)
}

// ownedLive reads obj from the API server (not the cache) and reports whether this InstanceSet controls it.
func (r *instanceSetReconciler) ownedLive(ctx context.Context, ist *unstructured.Unstructured, obj client.Object,
	key types.NamespacedName) bool {
	if err := r.apiReader.Get(ctx, key, obj); err != nil {
		return false
	}
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == ist.GetUID() && obj.GetLabels()[LabelOperator] == "true"
}

// ensureInstance creates what an instance lacks: its PodGroup (gang roles), its per-instance Service and its
// workload. Failures are requeue errors (the status is written, the reconcile retried).
func (r *instanceSetReconciler) ensureInstance(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec,
	in instance, gang bool) error {
	kind := role.Workload.Kind
	var workload client.Object
	var template corev1.PodTemplateSpec
	var pods int32
	if kind == "StatefulSet" {
		sts, err := newStatefulSet(ist, role, in, gang)
		if err != nil {
			return err
		}
		workload, template, pods = sts, sts.Spec.Template, *sts.Spec.Replicas
	} else {
		d, err := newDeployment(ist, role, in, gang)
		if err != nil {
			return err
		}
		workload, template, pods = d, d.Spec.Template, *d.Spec.Replicas
	}

	if gang {
		pg := newPodGroup(ist, in, pods, &template)
		existing := New(PodGroupGVK)
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(pg), existing); apierrors.IsNotFound(err) {
			if err := r.client.Create(ctx, pg, client.FieldOwner(Component)); err != nil && !apierrors.IsAlreadyExists(err) {
				return &requeueError{fmt.Errorf("create podgroup %s: %w", pg.GetName(), err)}
			}
		} else if err != nil {
			return &requeueError{err}
		}
	}

	if kind == "StatefulSet" || len(role.Services) == 0 {
		svc := newInstanceService(ist, in, kind == "StatefulSet")
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}); apierrors.IsNotFound(err) {
			if err := r.client.Create(ctx, svc, client.FieldOwner(Component)); err != nil && !apierrors.IsAlreadyExists(err) {
				return &requeueError{fmt.Errorf("create service %s: %w", svc.Name, err)}
			}
		} else if err != nil {
			return &requeueError{err}
		}
	}

	// The workload is found by its labels, as the real handlers do; it is never updated.
	list := newWorkloadList(kind)
	if err := r.client.List(ctx, list, client.InNamespace(in.namespace), client.MatchingLabels(in.labels(nil))); err != nil {
		return &requeueError{err}
	}
	if objs, _ := workloadItems(list); len(objs) > 0 {
		return nil
	}
	if err := r.client.Create(ctx, workload, client.FieldOwner(Component)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return &requeueError{fmt.Errorf("create %s %s: %w", kind, workload.GetName(), err)}
	}
	klog.Infof("created %s %s/%s", kind, in.namespace, workload.GetName())
	return nil
}

// writeStatus: replicas = spec.replicas, readyReplicas = the ready workloads carrying the InstanceSet's labels,
// Ready when readyReplicas ≥ replicas (models instanceset_controller.go getNewStatus). Where autoscaling/v2 is served
// the HPA path runs for every role and writes labelSelector; scalingResourceStatus is what it returned, nothing
// for a role without an HPA (Ascend/mind-cluster component/infer-operator/pkg/controller/v1/instanceset_controller.go,
// Reconcile and updateStatusForScaling; pkg/controller/scaling/scaling_manager.go, ReconcileScalingResource, which
// returns nil for a role without a scaling policy).
func (r *instanceSetReconciler) writeStatus(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec,
	service, roleName string, replicas int, scaling *scalingStatus) error {
	st, err := r.workloadStatus(ctx, ist, role.Workload.Kind, replicas)
	if err != nil {
		return err
	}
	st.LabelSelector, st.ScalingResourceStatus = "", nil
	if r.hpaServed {
		st.LabelSelector = LabelInferService + "=" + service + "," + LabelInstanceSet + "=" + roleName
		st.ScalingResourceStatus = scaling
	}
	return writeStatus(ctx, r.client, ist, st)
}

// refreshStatus recomputes the workload counts of an InstanceSet and keeps the rest of its status (the status
// update doRescheduling makes for the InstanceSets it touched).
func (r *instanceSetReconciler) refreshStatus(ctx context.Context, ist *unstructured.Unstructured) error {
	var role roleSpec
	if _, err := decodeField(ist, &role, "spec"); err != nil || role.Replicas == nil {
		return err
	}
	st, err := r.workloadStatus(ctx, ist, role.Workload.Kind, int(*role.Replicas))
	if err != nil {
		return err
	}
	return writeStatus(ctx, r.client, ist, st)
}

// workloadStatus is the InstanceSet's current status with replicas, readyReplicas, observedGeneration and the
// Ready condition recomputed.
func (r *instanceSetReconciler) workloadStatus(ctx context.Context, ist *unstructured.Unstructured, kind string,
	replicas int) (setStatus, error) {
	list := newWorkloadList(kind)
	if err := r.client.List(ctx, list, client.InNamespace(ist.GetNamespace()), instanceSetSelector(ist)); err != nil {
		return setStatus{}, err
	}
	_, ready := workloadItems(list)
	readyCount := int32(0)
	for _, ok := range ready {
		if ok {
			readyCount++
		}
	}
	st := currentStatus(ist)
	st.Conditions = slices.Clone(st.Conditions)
	st.Replicas = int32(replicas)
	st.ReadyReplicas = readyCount
	st.ObservedGeneration = ist.GetGeneration()
	if st.ReadyReplicas >= st.Replicas {
		st.setReady(true, "AllWorkLoadReady", "All WorkLoad replicas are ready")
	} else {
		st.setReady(false, "ReplicasNotReady",
			fmt.Sprintf("%d of %d InferService replicas are ready", st.ReadyReplicas, st.Replicas))
	}
	return st, nil
}
