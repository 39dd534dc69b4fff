package operator

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CRD names whose presence decides what runs.
const (
	crdInferServiceSet = "inferservicesets.mindcluster.huawei.com"
	crdInferService    = "inferservices.mindcluster.huawei.com"
	crdInstanceSet     = "instancesets.mindcluster.huawei.com"
	crdPodGroup        = "podgroups.scheduling.volcano.sh"
)

// Features are the CRDs established, and the APIs served, when the operator starts. Like the real operator, it
// decides once: a CRD installed later needs a restart (instanceset_controller.go SetupWithManager).
type Features struct {
	MindCluster bool // InferServiceSet, InferService and InstanceSet
	// PodGroup: Volcano's PodGroup CRD. The operator does not start without it (StartupError); the InstanceSet
	// validation's gang check (instanceset_controller.go validate) remains, as in the real one.
	PodGroup bool
	// HPA: autoscaling/v2 HorizontalPodAutoscalers are served (Kubernetes 1.23 and later). The real operator takes
	// its HPA path only then (Ascend/mind-cluster component/infer-operator/main.go, main: APIGroupVersionExists
	// "autoscaling/v2" sets the InstanceSet reconciler's SupportHPAScaling); without it an HPA role gets no HPA.
	HPA bool
}

// HPAServed reports whether the API server serves horizontalpodautoscalers in autoscaling/v2 (discovery).
func HPAServed(d discovery.DiscoveryInterface) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion("autoscaling/v2")
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovery of autoscaling/v2: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == "horizontalpodautoscalers" {
			return true, nil
		}
	}
	return false, nil
}

// CRDEstablished reports whether CustomResourceDefinition `name` exists with condition Established True.
func CRDEstablished(ctx context.Context, c client.Reader, name string) (bool, error) {
	crd := New(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get customresourcedefinition %s: %w", name, err)
	}
	var conds []metav1.Condition
	list, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		conds = append(conds, metav1.Condition{Type: t, Status: metav1.ConditionStatus(s)})
	}
	return meta.IsStatusConditionTrue(conds, "Established"), nil
}

// Detect reads which of the operator's CRDs are established.
func Detect(ctx context.Context, c client.Reader) (Features, error) {
	var f Features
	all := true
	for _, name := range []string{crdInferServiceSet, crdInferService, crdInstanceSet} {
		ok, err := CRDEstablished(ctx, c, name)
		if err != nil {
			return f, err
		}
		all = all && ok
	}
	f.MindCluster = all
	ok, err := CRDEstablished(ctx, c, crdPodGroup)
	if err != nil {
		return f, err
	}
	f.PodGroup = ok
	return f, nil
}

// operatorSelector: the real operator's caches of workloads, Services, pods and PodGroups hold only objects that
// carry its label, whatever its value (Ascend/mind-cluster component/infer-operator/main.go, createCacheOptions: the
// key exists). Its HPAs carry the label with the value "" (pkg/controller/scaling/scaling_manager.go,
// buildScalingResourceLabels), so the same selector finds them here.
var operatorSelector = func() labels.Selector {
	req, err := labels.NewRequirement(LabelOperator, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}()

// CacheByObject is the per-type cache configuration the operator's watches need. Volcano's PodGroup is always in
// it, as in the real operator's cache options: that is why it cannot start without the CRD (StartupError). The
// operator's pods have a cache of their own (Setup), since the AIBrix model selects its pods by another label.
func CacheByObject(f Features) map[client.Object]cache.ByObject {
	if !f.MindCluster {
		return nil
	}
	out := map[client.Object]cache.ByObject{
		&appsv1.StatefulSet{}: {Label: operatorSelector},
		&appsv1.Deployment{}:  {Label: operatorSelector},
		&corev1.Service{}:     {Label: operatorSelector},
		New(PodGroupGVK):      {Label: operatorSelector},
	}
	if f.HPA {
		out[&autoscalingv2.HorizontalPodAutoscaler{}] = cache.ByObject{Label: operatorSelector}
	}
	return out
}

// Watched lists one object of every kind the controllers watch, so that their informers can be made (and synced)
// before the manager reports ready.
func Watched(f Features) []client.Object {
	if !f.MindCluster {
		return nil
	}
	out := []client.Object{
		New(InferServiceSetGVK), New(InferServiceGVK), New(InstanceSetGVK),
		&appsv1.StatefulSet{}, &appsv1.Deployment{}, &corev1.Service{}, New(PodGroupGVK), &corev1.Node{},
	}
	if f.HPA {
		out = append(out, &autoscalingv2.HorizontalPodAutoscaler{})
	}
	return out
}

// StartupError is why the operator does not start: its cache options name Volcano's PodGroup, so without that CRD
// established the manager cannot be made (Ascend/mind-cluster component/infer-operator/main.go, main: ctrl.NewManager
// with createCacheOptions' cache, then "unable to start manager: %v" and exit 1; controller-runtime's cache cannot
// map the PodGroup kind). Nil when it can start. Without the infer-operator CRDs this fake runs its AIBrix model
// alone (the real one would not start either).
func StartupError(f Features) error {
	if !f.MindCluster || f.PodGroup {
		return nil
	}
	// The RESTMapper's error, as controller-runtime's cache wraps it; *v1beta1.PodGroup is the real one's typed object.
	noMatch := &meta.NoKindMatchError{GroupKind: PodGroupGVK.GroupKind(), SearchedVersions: []string{PodGroupGVK.Version}}
	return fmt.Errorf("unable to start manager: failed to determine if *v1beta1.PodGroup is namespaced: %w", noMatch)
}

// DefaultMaxBackoff is the longest per-item backoff of controller-runtime's default rate limiter.
const DefaultMaxBackoff = 1000 * time.Second

// RateLimiter is the per-item backoff of every controller: controller-runtime's default (5 ms doubling up to
// 1000 s per item, and 10 retries a second with a burst of 100 overall), as the real operator's controllers have
// no options. A shorter maxBackoff (--max-backoff) caps the doubling for tests that wait for a retry.
func RateLimiter(maxBackoff time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	if maxBackoff <= 0 || maxBackoff == DefaultMaxBackoff {
		return workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxBackoff),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// workloadPredicate: the InstanceSet controller ignores the creation of what it owns (its own creates), and
// reconciles on updates and deletions (models instanceset_controller.go WorkLoadPredicate).
func workloadPredicate() predicate.Funcs {
	return predicate.Funcs{CreateFunc: func(event.CreateEvent) bool { return false }}
}

// podGroupPredicate: only a PodGroup's deletion reconciles its InstanceSet (models instanceset_controller.go
// PodGroupPredicate).
func podGroupPredicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(event.UpdateEvent) bool { return false },
	}
}

// podCache is the operator's pod cache, run by the manager with its other caches (synced before any controller
// starts, and so before "ready").
type podCache struct{ cache.Cache }

func (c podCache) GetCache() cache.Cache { return c.Cache }

// newPodCache makes the pod cache: operator-labelled pods only, indexed by spec.nodeName for the node-pod cleaner.
func newPodCache(ctx context.Context, mgr ctrl.Manager) (cache.Cache, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		ByObject:   map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: operatorSelector}},
	})
	if err != nil {
		return nil, err
	}
	if err := c.IndexField(ctx, &corev1.Pod{}, podNodeNameField, podNodeName); err != nil {
		return nil, fmt.Errorf("register pod nodeName field index failed: %w", err)
	}
	return c, mgr.Add(podCache{c})
}

// Setup registers the controllers with mgr: InferServiceSet, InferService and InstanceSet, the rescheduler's pod
// handlers and the node-pod cleaner. maxBackoff: see RateLimiter.
func Setup(ctx context.Context, mgr ctrl.Manager, f Features, recorder record.EventRecorder,
	maxBackoff time.Duration) error {
	if !f.MindCluster {
		return nil
	}
	opts := controller.Options{RateLimiter: RateLimiter(maxBackoff)}
	c := mgr.GetClient()
	if err := builder.ControllerManagedBy(mgr).Named("inferserviceset-controller").WithOptions(opts).
		For(New(InferServiceSetGVK)).
		Owns(New(InferServiceGVK)).
		Complete(&inferServiceSetReconciler{client: c}); err != nil {
		return err
	}
	if err := builder.ControllerManagedBy(mgr).Named("inferservice-controller").WithOptions(opts).
		For(New(InferServiceGVK)).
		Owns(New(InstanceSetGVK)).
		Complete(&inferServiceReconciler{client: c}); err != nil {
		return err
	}
	pods, err := newPodCache(ctx, mgr)
	if err != nil {
		return err
	}
	rescheduler := newRescheduler(c)
	if err := rescheduler.watchPods(ctx, pods); err != nil {
		return fmt.Errorf("setup rescheduler failed: %w", err)
	}
	if err := setupInstanceSetController(mgr, f, opts, recorder, rescheduler); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).Named("node-pod-cleaner-controller").WithOptions(opts).
		For(&corev1.Node{}, builder.WithPredicates(nodeNotReadyPredicate())).
		Complete(&nodePodCleaner{client: c, pods: pods})
}

// setupInstanceSetController: the InstanceSet controller and what it owns (models instanceset_controller.go
// SetupWithManager).
func setupInstanceSetController(mgr ctrl.Manager, f Features, opts controller.Options, recorder record.EventRecorder,
	rescheduler *rescheduler) error {
	b := builder.ControllerManagedBy(mgr).Named(InstanceSetControllerName).WithOptions(opts).
		For(New(InstanceSetGVK)).
		Owns(&appsv1.StatefulSet{}, builder.WithPredicates(workloadPredicate())).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(workloadPredicate())).
		Owns(&corev1.Service{}, builder.WithPredicates(workloadPredicate())).
		Owns(New(PodGroupGVK), builder.WithPredicates(podGroupPredicate()))
	if f.HPA {
		b = b.Owns(&autoscalingv2.HorizontalPodAutoscaler{})
	}
	return b.Complete(&instanceSetReconciler{
		client:          mgr.GetClient(),
		apiReader:       mgr.GetAPIReader(),
		recorder:        recorder,
		rescheduler:     rescheduler,
		supportPodGroup: f.PodGroup,
		hpaServed:       f.HPA,
	})
}
