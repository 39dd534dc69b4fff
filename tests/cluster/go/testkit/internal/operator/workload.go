package operator

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// instance names one instance of an InstanceSet: InferService `service`, role `role`, index `index` (the indexer of
// the real operator). Every name below it derives from these.
type instance struct {
	namespace string
	service   string
	role      string
	index     int
}

func (in instance) indexText() string { return strconv.Itoa(in.index) }

// workloadName is "<InferService>-<role>-<index>", the same for both kinds.
func (in instance) workloadName() string { return in.service + "-" + in.role + "-" + in.indexText() }

// serviceName is the per-instance Service "service-<workload>" (headless for StatefulSets).
func (in instance) serviceName() string { return "service-" + in.workloadName() }

// podGroupName is the Volcano PodGroup "pg-<workload>".
func (in instance) podGroupName() string { return "pg-" + in.workloadName() }

func (in instance) labels(base map[string]string) map[string]string {
	return indexLabels(base, in.service, in.role, in.indexText())
}

// podTemplateMeta reads spec.template.metadata of a workload spec without caring about its kind.
func podTemplateMeta(spec json.RawMessage) metav1.ObjectMeta {
	var w struct {
		Template struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"template"`
	}
	if len(spec) > 0 {
		_ = json.Unmarshal(spec, &w)
	}
	return w.Template.Metadata
}

// workloadMeta is the metadata of an instance's workload (workload/statefulset_handler.go, deployment_handler.go): the
// InstanceSet's labels, the role's labels, the indexer labels and the pod template's fault-scheduling label; the
// InstanceSet's and the role's annotations.
func workloadMeta(ist *unstructured.Unstructured, role *roleSpec, in instance,
	template *corev1.PodTemplateSpec) metav1.ObjectMeta {
	labels := copyMap(ist.GetLabels())
	maps.Copy(labels, role.Metadata.Labels)
	labels = in.labels(labels)
	if v, ok := template.Labels[LabelFaultScheduling]; ok {
		labels[LabelFaultScheduling] = v
	}
	annotations := copyMap(ist.GetAnnotations())
	maps.Copy(annotations, role.Metadata.Annotations)
	m := metav1.ObjectMeta{
		Name:            in.workloadName(),
		Namespace:       in.namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)},
	}
	if len(annotations) > 0 {
		m.Annotations = annotations
	}
	return m
}

// overlayTemplate is all the operator changes in the role's pod template (the workload handlers; common/utils.go for
// the env): the indexer labels (and inferserviceid when the InstanceSet has it), the PodGroup annotation of a gang
// instance, and the env appended to every container (not init containers) in the operator's order.
func overlayTemplate(ist *unstructured.Unstructured, t *corev1.PodTemplateSpec, in instance, gang bool) {
	t.Labels = in.labels(t.Labels)
	if id, ok := ist.GetLabels()[LabelInferServiceID]; ok {
		t.Labels[LabelInferServiceID] = id
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if gang {
		t.Annotations[AnnotationGroupName] = in.podGroupName()
	}
	setName, setIndex := splitServiceName(in.service)
	env := []corev1.EnvVar{
		{Name: "INSTANCE_INDEX", Value: in.indexText()},
		{Name: "INSTANCE_ROLE", Value: in.role},
		{Name: "INFER_SERVICE_INDEX", Value: setIndex},
		{Name: "INFER_SERVICE_NAME", Value: setName},
	}
	for i := range t.Spec.Containers {
		t.Spec.Containers[i].Env = append(t.Spec.Containers[i].Env, env...)
	}
}

// newStatefulSet is the StatefulSet of an instance: the role's spec as rendered (selector, podManagementPolicy and
// everything else kept), with the overlay and serviceName "service-<workload>".
func newStatefulSet(ist *unstructured.Unstructured, role *roleSpec, in instance, gang bool) (*appsv1.StatefulSet, error) {
	var spec appsv1.StatefulSetSpec
	if err := json.Unmarshal(role.Spec, &spec); err != nil {
		return nil, fmt.Errorf("failed to unmarshal the role spec to a StatefulSetSpec: %w", err)
	}
	if spec.Replicas == nil {
		return nil, fmt.Errorf("replicas is nil")
	}
	overlayTemplate(ist, &spec.Template, in, gang)
	spec.ServiceName = in.serviceName()
	return &appsv1.StatefulSet{ObjectMeta: workloadMeta(ist, role, in, &spec.Template), Spec: spec}, nil
}

// newDeployment is the Deployment of an instance: the role's spec with the overlay.
func newDeployment(ist *unstructured.Unstructured, role *roleSpec, in instance, gang bool) (*appsv1.Deployment, error) {
	var spec appsv1.DeploymentSpec
	if err := json.Unmarshal(role.Spec, &spec); err != nil {
		return nil, fmt.Errorf("failed to unmarshal the role spec to a DeploymentSpec: %w", err)
	}
	if spec.Replicas == nil {
		return nil, fmt.Errorf("replicas is nil")
	}
	overlayTemplate(ist, &spec.Template, in, gang)
	return &appsv1.Deployment{ObjectMeta: workloadMeta(ist, role, in, &spec.Template), Spec: spec}, nil
}

// newInstanceService is the per-instance Service (statefulset_handler.go, deployment_handler.go), owned by the
// InstanceSet, its labels and selector the indexer labels: headless (port 8080 "infer") for a StatefulSet instance,
// ClusterIP 8080→8080 for a Deployment instance of a role without role.services.
func newInstanceService(ist *unstructured.Unstructured, in instance, headless bool) *corev1.Service {
	labels := in.labels(nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            in.serviceName(),
			Namespace:       in.namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)},
		},
		Spec: corev1.ServiceSpec{
			Selector: copyMap(labels),
			Ports:    []corev1.ServicePort{{Name: headlessPortName, Port: headlessPort}},
		},
	}
	if a := ist.GetAnnotations(); len(a) > 0 {
		svc.Annotations = copyMap(a)
	}
	if headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	} else {
		svc.Spec.Ports[0].TargetPort = intstr.FromInt32(headlessPort)
	}
	return svc
}

// newRoleService is what a role.services entry becomes (instanceset_controller.go checkOrCreateService):
// "<entry>-<InferService>-<role>", the entry's spec as it is (its metadata ignored) with the InferService index added
// to every nodePort, the InstanceSet's labels plus the indexer labels (instance index ""), the InstanceSet's
// annotations.
func newRoleService(ist *unstructured.Unstructured, entry roleService, service, role string, offset int32) *corev1.Service {
	spec := *entry.Spec.DeepCopy()
	for i := range spec.Ports {
		if spec.Ports[i].NodePort > 0 {
			spec.Ports[i].NodePort += offset
		}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            entry.Name + "-" + service + "-" + role,
			Namespace:       ist.GetNamespace(),
			Labels:          indexLabels(ist.GetLabels(), service, role, ""),
			OwnerReferences: []metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)},
		},
		Spec: spec,
	}
	if a := ist.GetAnnotations(); len(a) > 0 {
		svc.Annotations = copyMap(a)
	}
	return svc
}

// newPodGroup is the Volcano PodGroup of a gang instance (workload/podgroup_manager.go): minMember = pods per instance,
// minResources = the containers' requests (limits where a request is missing) times the pods; labels the InstanceSet's
// (without inferserviceid) plus the indexer labels, annotations the InstanceSet's, `status: {}`. Created once, never
// updated (GetOrCreatePodGroupForInstance).
func newPodGroup(ist *unstructured.Unstructured, in instance, pods int32, template *corev1.PodTemplateSpec) *unstructured.Unstructured {
	labels := copyMap(ist.GetLabels())
	delete(labels, LabelInferServiceID)
	pg := New(PodGroupGVK)
	pg.SetName(in.podGroupName())
	pg.SetNamespace(in.namespace)
	pg.SetLabels(in.labels(labels))
	if a := ist.GetAnnotations(); len(a) > 0 {
		pg.SetAnnotations(copyMap(a))
	}
	pg.SetOwnerReferences([]metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)})
	spec := map[string]any{"minMember": int64(pods)}
	if res := minResources(pods, &template.Spec); len(res) > 0 {
		spec["minResources"] = res
	}
	pg.Object["spec"] = spec
	// The typed PodGroup's status is a struct, always encoded; Volcano's CRD has no status subresource, so the
	// empty status is stored (Ascend/mind-cluster component/infer-operator/pkg/controller/workload/podgroup_manager.go,
	// createPodGroupForInstance, which creates a typed v1beta1.PodGroup; cosmetic).
	pg.Object["status"] = map[string]any{}
	return pg
}

func minResources(pods int32, spec *corev1.PodSpec) map[string]any {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		names := map[corev1.ResourceName]bool{}
		for n := range c.Resources.Requests {
			names[n] = true
		}
		for n := range c.Resources.Limits {
			names[n] = true
		}
		for n := range names {
			q, ok := c.Resources.Requests[n]
			if !ok {
				q = c.Resources.Limits[n]
			}
			total := sum[n]
			total.Add(q)
			sum[n] = total
		}
	}
	out := map[string]any{}
	for n, q := range sum {
		total := resource.Quantity{}
		for i := int32(0); i < pods; i++ {
			total.Add(q)
		}
		out[string(n)] = total.String()
	}
	return out
}

// statefulSetReady is the real operator's rule (statefulset_handler.go): the current generation observed, ready and
// updated replicas equal to spec.replicas, and no rollout in progress.
func statefulSetReady(s *appsv1.StatefulSet) bool {
	desired := int32(1)
	if s.Spec.Replicas != nil {
		desired = *s.Spec.Replicas
	}
	if s.Generation > 0 && s.Status.ObservedGeneration < s.Generation {
		return false
	}
	if s.Status.ReadyReplicas != desired || s.Status.UpdatedReplicas != desired {
		return false
	}
	return s.Status.CurrentRevision == "" || s.Status.UpdateRevision == "" ||
		s.Status.CurrentRevision == s.Status.UpdateRevision
}

// deploymentReady (deployment_handler.go): the current generation observed, ready == available == updated ==
// spec.replicas, and the Available and Progressing conditions True.
func deploymentReady(d *appsv1.Deployment) bool {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	if d.Generation > 0 && d.Status.ObservedGeneration < d.Generation {
		return false
	}
	if d.Status.ReadyReplicas != desired || d.Status.AvailableReplicas != desired || d.Status.UpdatedReplicas != desired {
		return false
	}
	available, progressing := false, false
	for _, c := range d.Status.Conditions {
		switch c.Type {
		case appsv1.DeploymentAvailable:
			available = c.Status == corev1.ConditionTrue
		case appsv1.DeploymentProgressing:
			progressing = c.Status == corev1.ConditionTrue
		}
	}
	return available && progressing
}

// workloadKinds maps a role's workload kind to its objects.
func newWorkloadList(kind string) client.ObjectList {
	if kind == "StatefulSet" {
		return &appsv1.StatefulSetList{}
	}
	return &appsv1.DeploymentList{}
}

// workloadItems returns the items of a list made by newWorkloadList, with whether each is ready.
func workloadItems(list client.ObjectList) ([]client.Object, []bool) {
	var objs []client.Object
	var ready []bool
	switch l := list.(type) {
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
			ready = append(ready, statefulSetReady(&l.Items[i]))
		}
	case *appsv1.DeploymentList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
			ready = append(ready, deploymentReady(&l.Items[i]))
		}
	}
	return objs, ready
}

// workloadKind is the InstanceSet's workload kind, as the handler lookup accepts it (models common.WorkLoadTypeToGVK
// and WorkLoadHandlerFactory.GetWorkLoadHandler): apps/v1 Deployment or StatefulSet.
func workloadKind(ist *unstructured.Unstructured) (string, error) {
	var w workloadType
	if _, err := decodeField(ist, &w, "spec", "workload"); err != nil {
		return "", err
	}
	return w.handlerKind()
}

// handlerKind: the apiVersion must parse, and only apps/v1 Deployment and StatefulSet have a handler.
func (w workloadType) handlerKind() (string, error) {
	gv, err := schema.ParseGroupVersion(w.APIVersion)
	if err != nil {
		return "", err
	}
	gvk := gv.WithKind(w.Kind)
	if gv.String() == "apps/v1" && (w.Kind == "Deployment" || w.Kind == "StatefulSet") {
		return w.Kind, nil
	}
	return "", fmt.Errorf("can not find workload handler for GVK %s", gvk)
}

// instanceSetSelector selects every workload of an InstanceSet: the indexer labels without the index.
func instanceSetSelector(ist *unstructured.Unstructured) client.MatchingLabels {
	l := ist.GetLabels()
	return client.MatchingLabels{LabelInferService: l[LabelInferService], LabelInstanceSet: l[LabelInstanceSet],
		LabelOperator: "true"}
}
