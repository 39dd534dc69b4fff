package operator

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hpaName is the HPA of an HPA-scaled InstanceSet (scaling_manager.go buildScalingResourceName).
func hpaName(ist *unstructured.Unstructured) string { return ist.GetName() + "-scaler" }

// hpaLabels: the InstanceSet's labels, scaling-owned-by = the InstanceSet, and the operator label with the value ""
// (no instanceset-index) (models scaling_manager.go buildScalingResourceLabels).
func hpaLabels(ist *unstructured.Unstructured) map[string]string {
	labels := copyMap(ist.GetLabels())
	labels[LabelScalingOwnedBy] = ist.GetName()
	labels[LabelOperator] = ""
	return labels
}

// reconcileHPA is the HPA path, run for every role where autoscaling/v2 is served (C4; models scaling_manager.go
// ReconcileScalingResource). A role with scalingPolicy.type HPA gets the HPA "<InstanceSet>-scaler": the policy's
// spec with scaleTargetRef the InstanceSet (through its scale subresource), created once ("HPA created
// successfully") and from then on updated on every reconcile ("HPA updated successfully"). The HPA then owns the
// InstanceSet's spec.replicas; the InferService controller keeps them on updates. The cluster runs no HPA
// controller, so nothing scales by itself. A role without a policy loses the HPAs labelled as its own and reports
// none. A failure is in the returned status's message (and logged); it does not stop the reconcile.
func (r *instanceSetReconciler) reconcileHPA(ctx context.Context, ist *unstructured.Unstructured,
	role *roleSpec) (*scalingStatus, error) {
	if !r.hpaServed {
		return nil, nil
	}
	if role.ScalingPolicy == nil {
		return nil, r.deleteOwnHPAs(ctx, ist)
	}
	if role.ScalingPolicy.Type != "HPA" {
		msg := "unsupported scaling policy type: " + role.ScalingPolicy.Type
		klog.Errorf("InstanceSet %s/%s: %s", ist.GetNamespace(), ist.GetName(), msg)
		return &scalingStatus{Type: role.ScalingPolicy.Type, Message: msg}, nil
	}
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{}
	if err := json.Unmarshal(role.ScalingPolicy.Spec, &spec); err != nil {
		msg := fmt.Sprintf("failed to unmarshal HPA spec: %v", err)
		klog.Errorf("InstanceSet %s/%s: %s", ist.GetNamespace(), ist.GetName(), msg)
		return &scalingStatus{Type: "HPA", Message: msg}, nil
	}
	spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{
		APIVersion: InstanceSetGVK.GroupVersion().String(), Kind: InstanceSetGVK.Kind, Name: ist.GetName(),
	}
	key := client.ObjectKey{Namespace: ist.GetNamespace(), Name: hpaName(ist)}
	existing := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := r.client.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		return r.createHPA(ctx, ist, key, spec), nil
	} else if err != nil {
		return nil, err
	}
	status := &scalingStatus{Type: "HPA", Name: key.Name, Ready: true, Message: "HPA updated successfully"}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := r.client.Get(ctx, key, latest); err != nil {
			return err
		}
		latest.Spec = spec
		return r.client.Update(ctx, latest, client.FieldOwner(Component))
	})
	if err != nil {
		status.Ready, status.Message = false, fmt.Sprintf("failed to update HPA %s: %v", key.Name, err)
		klog.Errorf("InstanceSet %s/%s: %s", ist.GetNamespace(), ist.GetName(), status.Message)
	}
	return status, nil
}

// createHPA creates the HPA, owned by the InstanceSet, with the InstanceSet's annotations (models
// scaling_manager.go createHPA).
func (r *instanceSetReconciler) createHPA(ctx context.Context, ist *unstructured.Unstructured, key client.ObjectKey,
	spec autoscalingv2.HorizontalPodAutoscalerSpec) *scalingStatus {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:            key.Name,
			Namespace:       key.Namespace,
			Labels:          hpaLabels(ist),
			OwnerReferences: []metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)},
		},
		Spec: spec,
	}
	if a := ist.GetAnnotations(); len(a) > 0 {
		hpa.Annotations = copyMap(a)
	}
	if err := r.client.Create(ctx, hpa, client.FieldOwner(Component)); err != nil {
		msg := fmt.Sprintf("failed to create HPA %s: %v", key.Name, err)
		klog.Errorf("InstanceSet %s/%s: %s", ist.GetNamespace(), ist.GetName(), msg)
		return &scalingStatus{Type: "HPA", Name: key.Name, Message: msg}
	}
	return &scalingStatus{Type: "HPA", Name: key.Name, Ready: true, Message: "HPA created successfully"}
}

// deleteOwnHPAs deletes the HPAs labelled scaling-owned-by this InstanceSet (models scaling_manager.go
// cleanupScalingResource).
func (r *instanceSetReconciler) deleteOwnHPAs(ctx context.Context, ist *unstructured.Unstructured) error {
	list := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := r.client.List(ctx, list, client.InNamespace(ist.GetNamespace()),
		client.MatchingLabels{LabelScalingOwnedBy: ist.GetName()}); err != nil {
		return err
	}
	for i := range list.Items {
		if err := r.client.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
			return err
		}
		klog.Infof("InstanceSet %s/%s: deleted HPA %s", ist.GetNamespace(), ist.GetName(), list.Items[i].Name)
	}
	return nil
}
