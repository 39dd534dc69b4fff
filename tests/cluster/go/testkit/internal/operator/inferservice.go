package operator

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inferServiceReconciler keeps one InstanceSet "<InferService>-<role>" per role of an InferService
// (inferservice_controller.go): roles are matched by name, an existing InstanceSet gets only its spec replaced
// (its labels and annotations are fixed at creation, D3), and a removed role's InstanceSet is deleted.
type inferServiceReconciler struct {
	client client.Client
}

func (r *inferServiceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	is := New(InferServiceGVK)
	if err := r.client.Get(ctx, req.NamespacedName, is); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if is.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	var spec inferServiceSpec
	if _, err := decodeField(is, &spec, "spec"); err != nil {
		klog.Errorf("InferService %s: unreadable spec: %v", req, err)
		return ctrl.Result{}, nil
	}
	// A refusal only reaches the log (inferservice_controller.go): no InstanceSet is created, changed or deleted, and
	// no status written.
	if err := validateRoles(&spec); err != nil {
		klog.Errorf("validation failed for InferService %s: %v", req, err)
		return ctrl.Result{}, nil
	}
	rawRoles, _, _ := unstructured.NestedSlice(is.Object, "spec", "roles")

	list := NewList(InstanceSetGVK)
	if err := r.client.List(ctx, list, client.InNamespace(is.GetNamespace()),
		client.MatchingLabels{LabelInferService: is.GetName()}); err != nil {
		return ctrl.Result{}, err
	}
	existing := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		ist := &list.Items[i]
		if role, ok := ist.GetLabels()[LabelInstanceSet]; ok {
			existing[role] = ist
		}
	}
	wanted := map[string]bool{}
	for _, role := range spec.Roles {
		wanted[role.Name] = true
	}
	// Roles removed from the spec: their InstanceSets go (default propagation), with everything they own.
	for role, ist := range existing {
		if wanted[role] {
			continue
		}
		if err := r.client.Delete(ctx, ist); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		klog.Infof("deleted InstanceSet %s/%s (role %s removed)", ist.GetNamespace(), ist.GetName(), role)
	}
	for i, role := range spec.Roles {
		if i >= len(rawRoles) {
			break
		}
		raw, ok := rawRoles[i].(map[string]any)
		if !ok {
			continue
		}
		desired := copyValue(raw).(map[string]any)
		addServiceMetadata(desired)
		if ist, ok := existing[role.Name]; ok {
			current, _, _ := unstructured.NestedMap(ist.Object, "spec")
			// An HPA owns the replicas of an InstanceSet it scales: a replicas-only difference is none, and an update
			// keeps the InstanceSet's count (inferservice_controller.go updateExistInstanceSets).
			var live roleSpec
			_, _ = decodeField(ist, &live, "spec")
			if live.hpa() {
				if n, found := current["replicas"]; found {
					desired["replicas"] = n
				} else {
					delete(desired, "replicas")
				}
			}
			if deepEqualJSON(current, desired) {
				continue
			}
			updated := ist.DeepCopy()
			updated.Object["spec"] = desired
			if err := r.client.Update(ctx, updated, client.FieldOwner(Component)); err != nil {
				return requeueOnConflict(err)
			}
			klog.Infof("updated InstanceSet %s/%s", ist.GetNamespace(), ist.GetName())
			continue
		}
		ist := newInstanceSet(is, &spec, &role, desired)
		if err := r.client.Create(ctx, ist, client.FieldOwner(Component)); err == nil {
			klog.Infof("created InstanceSet %s/%s", ist.GetNamespace(), ist.GetName())
		} else if !apierrors.IsAlreadyExists(err) {
			klog.Errorf("create InstanceSet %s/%s: %v", ist.GetNamespace(), ist.GetName(), err)
			return ctrl.Result{}, err
		}
	}

	// Status: replicas = roles, readyReplicas = InstanceSets Ready; Ready needs at least one role (createReadyCondition).
	if err := r.client.List(ctx, list, client.InNamespace(is.GetNamespace()),
		client.MatchingLabels{LabelInferService: is.GetName()}); err != nil {
		return ctrl.Result{}, err
	}
	ready := int32(0)
	for i := range list.Items {
		if readyCondition(&list.Items[i]) {
			ready++
		}
	}
	st := nextStatus(is)
	st.Replicas = int32(len(spec.Roles))
	st.ReadyReplicas = ready
	st.ObservedGeneration = is.GetGeneration()
	if ready >= st.Replicas && st.Replicas > 0 {
		st.setReady(true, "AllInstanceSetsReady", "All InstanceSet replicas are ready")
	} else {
		st.setReady(false, "ReplicasNotReady", fmt.Sprintf("%d of %d InstanceSet replicas are ready", ready, st.Replicas))
	}
	return requeueOnConflict(writeStatus(ctx, r.client, is, st))
}

// validateRoles: at most 32 roles, each named, uniquely, with a DNS-1123 label; with the Priority strategy a
// given priority must be at least 1.
func validateRoles(spec *inferServiceSpec) error {
	if len(spec.Roles) > maxRoles {
		return fmt.Errorf("number of roles %d exceeds maximum allowed %d", len(spec.Roles), maxRoles)
	}
	seen := map[string]bool{}
	for i, role := range spec.Roles {
		if role.Name == "" {
			return fmt.Errorf("role at index %d has empty name", i)
		}
		if seen[role.Name] {
			return fmt.Errorf("duplicate role name %s", role.Name)
		}
		seen[role.Name] = true
		if errs := validation.IsDNS1123Label(role.Name); len(errs) > 0 {
			return fmt.Errorf("role name %s is invalid: %s", role.Name, strings.Join(errs, "; "))
		}
		priority := spec.SchedulingStrategy != nil && spec.SchedulingStrategy.Type == StrategyPriority
		if priority && role.Priority != nil && *role.Priority < 1 {
			return fmt.Errorf("role %s priority %d is below 1", role.Name, *role.Priority)
		}
	}
	return nil
}

// newInstanceSet is the InstanceSet of `role` as the operator creates it (inferservice_controller.go newInstanceSet):
// the role's metadata.labels plus inferservice-name, instanceset-name and priority-scheduling-strategy (the
// InferService's strategy, default Parallel); the role's annotations, plus the pod template's
// huawei.com/schedule_policy when the role has none; and, for a super-pod policy ("-sp"), the label inferserviceid =
// the InferService's UID. Set once: never updated.
func newInstanceSet(is *unstructured.Unstructured, spec *inferServiceSpec, role *roleSpec,
	rawRole map[string]any) *unstructured.Unstructured {
	labels := copyMap(role.Metadata.Labels)
	labels[LabelInferService] = is.GetName()
	labels[LabelInstanceSet] = role.Name
	labels[LabelPriorityStrategy] = StrategyParallel
	if spec.SchedulingStrategy != nil && spec.SchedulingStrategy.Type != "" {
		labels[LabelPriorityStrategy] = spec.SchedulingStrategy.Type
	}
	annotations := copyMap(role.Metadata.Annotations)
	tmeta := podTemplateMeta(role.Spec)
	if _, ok := annotations[AnnotationSchedulePolicy]; !ok {
		if policy, ok := tmeta.Annotations[AnnotationSchedulePolicy]; ok {
			annotations[AnnotationSchedulePolicy] = policy
		}
	}
	if policy := annotations[AnnotationSchedulePolicy]; len(policy) > len(superPodPolicySuffix) &&
		strings.HasSuffix(policy, superPodPolicySuffix) {
		_, inRole := labels[LabelInferServiceID]
		_, inTemplate := tmeta.Labels[LabelInferServiceID]
		if !inRole && !inTemplate {
			labels[LabelInferServiceID] = string(is.GetUID())
		}
	}
	ist := New(InstanceSetGVK)
	ist.SetName(is.GetName() + "-" + role.Name)
	ist.SetNamespace(is.GetNamespace())
	ist.SetLabels(labels)
	if len(annotations) > 0 {
		ist.SetAnnotations(annotations)
	}
	ist.SetOwnerReferences([]metav1.OwnerReference{controllerRef(is, InferServiceGVK)})
	ist.Object["spec"] = rawRole
	return ist
}
