// Package aibrix is the test stand-in for AIBrix's StormService controller (orchestration.aibrix.ai/v1alpha1), as
// much as kubectl-mindie's deploy, scale, status and delete need: the pods of every role, replica and pod group with
// AIBrix's labels, and the StormService status (roleStatuses).
//
// Simplifications: AIBrix puts a RoleSet (and PodSets) between
// the StormService and its pods; no such CRDs are installed here, so the pods are owned by the StormService itself
// (deleting it still cascades). Pod names are stable per slot, as AIBrix's stateful roles keep them:
// "<app>-roleset-<role>-<replica>" (podGroupSize 1) or "<app>-roleset-<role>-<replica>-<pod>". AIBrix creates pods
// itself (no workload controller between), and so does this controller; the scheduler binds them and KWOK runs them.
package aibrix

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"kubectl-mindie/tests/cluster/go/testkit/internal/operator"
)

// The pod labels of AIBrix's controller (github.com/vllm-project/aibrix pkg/constants), as src/aibrix/storm_render.h
// names them for the client side.
const (
	LabelStormServiceName = "storm-service-name"
	LabelRevision         = "storm-service-revision"
	LabelRoleName         = "role-name"
	LabelRoleSetName      = "roleset-name"
	LabelRoleTemplateHash = "role-template-hash"
	LabelReplicaIndex     = "stormservice.orchestration.aibrix.ai/role-replica-index"
	LabelPodGroupIndex    = "stormservice.orchestration.aibrix.ai/pod-group-index"

	// CRDName is the StormService CRD; without it this controller does not run.
	CRDName = "stormservices.orchestration.aibrix.ai"
	// Component is the field manager of every write.
	Component = "aibrix-controller-manager"
	// maxSlots bounds the pods of one StormService (a test instrument must not allocate without bound).
	maxSlots = 4096
)

// StormServiceGVK is the kind this package reconciles.
var StormServiceGVK = schema.GroupVersionKind{Group: "orchestration.aibrix.ai", Version: "v1alpha1", Kind: "StormService"}

type role struct {
	Name         string                 `json:"name"`
	Replicas     *int32                 `json:"replicas,omitempty"`
	PodGroupSize *int32                 `json:"podGroupSize,omitempty"`
	Template     corev1.PodTemplateSpec `json:"template"`
	rawTemplate  any
}

// slot is one pod a StormService asks for.
type slot struct {
	role      *role
	replica   int
	pod       int
	groupSize int
	name      string
}

// hash is a stable 10-hex-digit FNV-1a hash of a JSON value (maps marshal with sorted keys).
func hash(v any) string {
	raw, _ := json.Marshal(v)
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return fmt.Sprintf("%016x", h.Sum64())[:10]
}

func roles(ss *unstructured.Unstructured) []*role {
	raw, _, _ := unstructured.NestedSlice(ss.Object, "spec", "template", "spec", "roles")
	var out []*role
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			continue
		}
		ro := &role{}
		if err := json.Unmarshal(b, ro); err != nil || ro.Name == "" {
			klog.Warningf("StormService %s/%s: role %v unreadable: %v", ss.GetNamespace(), ss.GetName(), m["name"], err)
			continue
		}
		ro.rawTemplate = m["template"]
		out = append(out, ro)
	}
	return out
}

// slots: every role's replicas × podGroupSize (absent counts as 1, negative replicas as 0).
func slots(app string, rs []*role) []slot {
	var out []slot
	for _, r := range rs {
		replicas := int(max(ptr.Deref(r.Replicas, 1), 0))
		group := int(max(ptr.Deref(r.PodGroupSize, 1), 1))
		for i := 0; i < replicas; i++ {
			for p := 0; p < group; p++ {
				if len(out) >= maxSlots {
					return out
				}
				name := app + "-roleset-" + r.Name + "-" + strconv.Itoa(i)
				if group > 1 {
					name += "-" + strconv.Itoa(p)
				}
				out = append(out, slot{role: r, replica: i, pod: p, groupSize: group, name: name})
			}
		}
	}
	return out
}

type reconciler struct {
	client client.Client
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ss := operator.New(StormServiceGVK)
	if err := r.client.Get(ctx, req.NamespacedName, ss); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ss.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	app := ss.GetName()
	rs := roles(ss)
	byName := map[string]*role{}
	for _, ro := range rs {
		byName[ro.Name] = ro
	}
	wanted := slots(app, rs)
	wantedNames := map[string]bool{}
	for _, s := range wanted {
		wantedNames[s.name] = true
	}
	templateSpec, _, _ := unstructured.NestedFieldNoCopy(ss.Object, "spec", "template")
	revision := app + "-" + hash(templateSpec)

	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(ss.GetNamespace()),
		client.MatchingLabels{LabelStormServiceName: app}); err != nil {
		return ctrl.Result{}, err
	}
	present := map[string]*corev1.Pod{}
	var owned []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		present[p.Name] = p
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == ss.GetUID() {
			owned = append(owned, p)
		}
	}
	// Scale-in and removed roles: the pods of slots no longer wanted go. A changed role template replaces the
	// role's pods (AIBrix's default Recreate role update): they go here and are made again once gone.
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			continue
		}
		ro := byName[p.Labels[LabelRoleName]]
		stale := ro == nil || p.Labels[LabelRoleTemplateHash] != hash(ro.rawTemplate)
		if wantedNames[p.Name] && !stale {
			continue
		}
		if err := r.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		klog.Infof("deleted pod %s/%s of StormService %s", p.Namespace, p.Name, app)
	}
	for _, s := range wanted {
		if _, ok := present[s.name]; ok {
			continue // running, or terminating: its deletion event brings the reconcile that makes it again
		}
		pod := newPod(ss, s, revision)
		if err := r.client.Create(ctx, pod, client.FieldOwner(Component)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			klog.Errorf("create pod %s/%s of StormService %s: %v", pod.Namespace, pod.Name, app, err)
			return ctrl.Result{}, err
		}
		klog.Infof("created pod %s/%s of StormService %s", pod.Namespace, pod.Name, app)
	}
	return r.writeStatus(ctx, ss, rs, owned)
}

// newPod is the pod of a slot: the role's template plus AIBrix's labels, owned by the StormService; no node (the
// scheduler binds it).
func newPod(ss *unstructured.Unstructured, s slot, revision string) *corev1.Pod {
	t := s.role.Template.DeepCopy()
	l := map[string]string{}
	for k, v := range t.Labels {
		l[k] = v
	}
	l[LabelStormServiceName] = ss.GetName()
	l[LabelRevision] = revision
	l[LabelRoleName] = s.role.Name
	l[LabelRoleSetName] = ss.GetName() + "-roleset"
	l[LabelRoleTemplateHash] = hash(s.role.rawTemplate)
	l[LabelReplicaIndex] = strconv.Itoa(s.replica)
	if s.groupSize > 1 {
		l[LabelPodGroupIndex] = strconv.Itoa(s.pod)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.name,
			Namespace:   ss.GetNamespace(),
			Labels:      l,
			Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: StormServiceGVK.GroupVersion().String(), Kind: StormServiceGVK.Kind,
				Name: ss.GetName(), UID: ss.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: t.Spec,
	}
}

type roleStatus struct {
	Name                 string `json:"name"`
	Replicas             int32  `json:"replicas"`
	ReadyReplicas        int32  `json:"readyReplicas"`
	NotReadyReplicas     int32  `json:"notReadyReplicas"`
	UpdatedReplicas      int32  `json:"updatedReplicas"`
	UpdatedReadyReplicas int32  `json:"updatedReadyReplicas"`
}

type condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

type status struct {
	ObservedGeneration int64        `json:"observedGeneration"`
	Replicas           int32        `json:"replicas"`
	ReadyReplicas      int32        `json:"readyReplicas"`
	NotReadyReplicas   int32        `json:"notReadyReplicas"`
	RoleStatuses       []roleStatus `json:"roleStatuses"`
	Conditions         []condition  `json:"conditions"`
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// writeStatus: per role, replicas counted in role replicas (a replica is ready when every pod of its group is
// there and ready, updated when all run the role's template); the one RoleSet of pooled mode is ready when every
// role has all its replicas ready and updated.
func (r *reconciler) writeStatus(ctx context.Context, ss *unstructured.Unstructured, rs []*role,
	owned []*corev1.Pod) (ctrl.Result, error) {
	type counts struct {
		pods, ready int
		updated     bool
	}
	byRole := map[string]map[string]*counts{}
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			continue
		}
		name, replica := p.Labels[LabelRoleName], p.Labels[LabelReplicaIndex]
		if byRole[name] == nil {
			byRole[name] = map[string]*counts{}
		}
		c := byRole[name][replica]
		if c == nil {
			c = &counts{updated: true}
			byRole[name][replica] = c
		}
		c.pods++
		if podReady(p) {
			c.ready++
		}
		for _, ro := range rs {
			if ro.Name == name && p.Labels[LabelRoleTemplateHash] != hash(ro.rawTemplate) {
				c.updated = false
			}
		}
	}
	allReady := true
	st := status{ObservedGeneration: ss.GetGeneration(), Replicas: 1, RoleStatuses: []roleStatus{}}
	for _, ro := range rs {
		want := int32(max(ptr.Deref(ro.Replicas, 1), 0))
		group := int(max(ptr.Deref(ro.PodGroupSize, 1), 1))
		rsS := roleStatus{Name: ro.Name}
		keys := make([]string, 0, len(byRole[ro.Name]))
		for k := range byRole[ro.Name] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := byRole[ro.Name][k]
			rsS.Replicas++
			isReady := c.pods >= group && c.ready >= group
			if isReady {
				rsS.ReadyReplicas++
			}
			if c.updated {
				rsS.UpdatedReplicas++
			}
			if isReady && c.updated {
				rsS.UpdatedReadyReplicas++
			}
		}
		rsS.NotReadyReplicas = rsS.Replicas - rsS.ReadyReplicas
		if rsS.ReadyReplicas != want || rsS.Replicas != want || rsS.UpdatedReadyReplicas != want {
			allReady = false
		}
		st.RoleStatuses = append(st.RoleStatuses, rsS)
	}
	cond := condition{Type: "Ready", Status: "False", Reason: "RolesNotReady", Message: "some role replicas are not ready"}
	if allReady {
		st.ReadyReplicas = 1
		cond = condition{Type: "Ready", Status: "True", Reason: "AllRolesReady", Message: "every role replica is ready"}
	} else {
		st.NotReadyReplicas = 1
	}
	var previous status
	if v, found, _ := unstructured.NestedFieldNoCopy(ss.Object, "status"); found && v != nil {
		if b, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(b, &previous)
		}
	}
	cond.LastTransitionTime = metav1.Now()
	for _, c := range previous.Conditions {
		if c.Type == "Ready" && c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	st.Conditions = []condition{cond}
	if equality.Semantic.DeepEqual(previous, st) {
		return ctrl.Result{}, nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return ctrl.Result{}, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return ctrl.Result{}, err
	}
	updated := ss.DeepCopy()
	updated.Object["status"] = v
	if err := r.client.Status().Update(ctx, updated, client.FieldOwner(Component)); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// podSelector: the pod cache holds only pods of StormServices.
func podSelector() labels.Selector {
	req, _ := labels.NewRequirement(LabelStormServiceName, selection.Exists, nil)
	return labels.NewSelector().Add(*req)
}

// CacheByObject is the cache configuration of the pods this controller watches.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: podSelector()}}
}

// Watched lists the kinds whose informers must be synced before ready.
func Watched() []client.Object {
	return []client.Object{operator.New(StormServiceGVK), &corev1.Pod{}}
}

// Setup registers the StormService controller with mgr; maxBackoff: see operator.RateLimiter.
func Setup(mgr ctrl.Manager, maxBackoff time.Duration) error {
	return builder.ControllerManagedBy(mgr).Named("stormservice").
		WithOptions(controller.Options{RateLimiter: operator.RateLimiter(maxBackoff)}).
		For(operator.New(StormServiceGVK)).
		Owns(&corev1.Pod{}).
		Complete(&reconciler{client: mgr.GetClient()})
}
