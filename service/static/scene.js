// 3D playback of a stored solution with three.js. The model document gives the geometry once
// (bodies from their VgraphicsData, Exudyn's graphics dictionaries, else boxes sized from mass
// and inertia; joints at their markers with their axes; spring-dampers as lines); each solution
// row gives the node poses. Nothing here knows the solver.
import * as THREE from "three";
import { OrbitControls } from "/static/vendor/three/OrbitControls.js";

const KINDS = ["nodes", "objects", "markers", "loads", "sensors"];
const SINGULAR = { nodes: "node", objects: "object", markers: "marker", loads: "load", sensors: "sensor" };
const JOINTS = new Set(["JointRevoluteZ", "JointPrismaticX", "JointGeneric", "JointSpherical"]);
const SPRINGS = new Set(["ConnectorSpringDamper", "ConnectorCartesianSpringDamper"]);
const DEFAULT_COLOR = [0.45, 0.55, 0.7, 1];

// Index of a reference (an index, or an item's name) into doc[kind].
function resolver(doc) {
  const byName = {};
  for (const kind of KINDS) {
    byName[kind] = new Map();
    (doc[kind] || []).forEach((item, i) => byName[kind].set(item.name || `${SINGULAR[kind]}${i}`, i));
  }
  return (kind, ref) => (typeof ref === "number" ? ref : byName[kind].get(ref));
}

function visual(item, key) {
  return item[key] !== undefined ? item[key] : (item.visualization || {})[key];
}

function rows(value, n) {
  // Exudyn's graphics give arrays flat or as rows (#2709): flat here
  const flat = [].concat(...(value || []).map((v) => (Array.isArray(v) ? v : [v])));
  return n ? flat.slice(0, flat.length - (flat.length % n)) : flat;
}

function colorOf(rgba) {
  const c = rgba && rgba.length >= 3 && rgba[0] >= 0 ? rgba : DEFAULT_COLOR;
  return new THREE.Color(c[0], c[1], c[2]);
}

function meshMaterial(alpha) {
  return new THREE.MeshPhongMaterial({ vertexColors: true, side: THREE.DoubleSide, shininess: 30,
                                       transparent: alpha < 1, opacity: alpha });
}

// One Exudyn graphics dictionary as a three.js object (in its body's frame), or null if not drawn.
export function graphicsObject(g) {
  const type = g.type;
  if (type === "TriangleList") {
    const points = rows(g.points, 3);
    const count = points.length / 3;
    let tris = rows(g.triangles, 3);
    const t6 = rows(g.triangles6, 6);
    for (let i = 0; i < t6.length; i += 6) {  // a 6-node triangle as 4 flat ones on its points
      const [c0, c1, c2, m01, m12, m20] = t6.slice(i, i + 6);
      tris = tris.concat([c0, m01, m20, m01, c1, m12, m20, m12, c2, m01, m12, m20]);
    }
    const colors = rows(g.colors, 4);
    const rgb = new Float32Array(count * 3);
    let alpha = 1;
    for (let i = 0; i < count; i++) {
      const c = colors.length >= 4 * (i + 1) && colors[4 * i] >= 0 ? colors.slice(4 * i, 4 * i + 4) : DEFAULT_COLOR;
      rgb.set(c.slice(0, 3), 3 * i);
      alpha = Math.min(alpha, c[3] ?? 1);
    }
    const geo = new THREE.BufferGeometry();
    geo.setAttribute("position", new THREE.Float32BufferAttribute(points, 3));
    geo.setAttribute("color", new THREE.Float32BufferAttribute(rgb, 3));
    geo.setIndex(tris);
    const normals = rows(g.normals, 3);
    if (normals.length === points.length) geo.setAttribute("normal", new THREE.Float32BufferAttribute(normals, 3));
    else geo.computeVertexNormals();
    return new THREE.Mesh(geo, meshMaterial(alpha));
  }
  if (type === "Spheres") {
    const points = rows(g.points, 3), colors = rows(g.colors, 4);
    const radii = [].concat(g.radii ?? 0.1);
    const group = new THREE.Group();
    for (let i = 0; i < points.length / 3; i++) {
      const mesh = new THREE.Mesh(new THREE.SphereGeometry(radii[Math.min(i, radii.length - 1)], 24, 16),
                                  new THREE.MeshPhongMaterial({ color: colorOf(colors.slice(4 * i, 4 * i + 4)) }));
      mesh.position.fromArray(points, 3 * i);
      group.add(mesh);
    }
    return group;
  }
  if (type === "Line") {
    const geo = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(rows(g.data, 3), 3));
    return new THREE.Line(geo, new THREE.LineBasicMaterial({ color: colorOf(g.color) }));
  }
  if (type === "Lines") {  // quadratic: per segment its two ends, then its mid point
    const p = rows(g.points, 3), path = [];
    const quadratic = g.shape === "quadratic";
    for (let i = 0; i + (quadratic ? 9 : 6) <= p.length; i += quadratic ? 9 : 6) {
      if (quadratic) path.push(...p.slice(i, i + 3), ...p.slice(i + 6, i + 9), ...p.slice(i + 6, i + 9), ...p.slice(i + 3, i + 6));
      else path.push(...p.slice(i, i + 6));
    }
    const geo = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(path, 3));
    return new THREE.LineSegments(geo, new THREE.LineBasicMaterial({ color: colorOf(rows(g.colors, 4).slice(0, 4)) }));
  }
  if (type === "Circle") {
    const r = g.radius ?? 1, c = g.position || [0, 0, 0], pts = [];
    for (let i = 0; i <= 48; i++) {
      const a = (2 * Math.PI * i) / 48;
      pts.push(c[0] + r * Math.cos(a), c[1] + r * Math.sin(a), c[2]);
    }
    const geo = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(pts, 3));
    return new THREE.Line(geo, new THREE.LineBasicMaterial({ color: colorOf(g.color) }));
  }
  return null;  // Text and others: not drawn
}

// Eigenvalues and eigenvectors (the columns of `vectors`) of a symmetric 3x3 matrix: cyclic
// Jacobi rotations, each zeroing one off-diagonal entry (converges in a few sweeps for 3x3).
export function symmetricEigen(matrix) {
  const a = matrix.map((r) => r.slice()), v = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  for (let sweep = 0; sweep < 50; sweep++) {
    const off = a[0][1] ** 2 + a[0][2] ** 2 + a[1][2] ** 2;
    if (!(off > 1e-30 * (a[0][0] ** 2 + a[1][1] ** 2 + a[2][2] ** 2))) break;
    for (const [p, q] of [[0, 1], [0, 2], [1, 2]]) {
      if (a[p][q] === 0) continue;
      const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
      const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1), s = t * c;
      const columns = (m, k) => { const x = m[k][p], y = m[k][q]; m[k][p] = c * x - s * y; m[k][q] = s * x + c * y; };
      const rows = (m, k) => { const x = m[p][k], y = m[q][k]; m[p][k] = c * x - s * y; m[q][k] = s * x + c * y; };
      for (let k = 0; k < 3; k++) columns(a, k);  // A P
      for (let k = 0; k < 3; k++) rows(a, k);  // Pᵀ (A P)
      for (let k = 0; k < 3; k++) columns(v, k);  // V P
    }
  }
  return { values: [a[0][0], a[1][1], a[2][2]], vectors: v };
}

// The homogeneous box with a body's mass and inertia: Exudyn's inertia [Jxx,Jyy,Jzz,Jyz,Jxz,Jxy]
// is about the reference point, so it is moved to the center of mass (parallel axes), then split
// into principal moments and axes. Returns the side lengths along the principal axes (each at
// least `floor`), the rotation (rows; columns are the axes, a right-handed frame) and the center.
export function boxFromInertia(mass, inertia, centerOfMass, floor) {
  const m = Math.max(mass || 0, 1e-12), b = centerOfMass || [0, 0, 0];
  const [jxx, jyy, jzz, jyz, jxz, jxy] = inertia || [0, 0, 0, 0, 0, 0];
  const ref = [[jxx, jxy, jxz], [jxy, jyy, jyz], [jxz, jyz, jzz]];
  const bb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
  const com = ref.map((row, i) => row.map((j, k) => j - (mass || 0) * ((i === k ? bb : 0) - b[i] * b[k])));
  const { values: [j1, j2, j3], vectors: axes } = symmetricEigen(com);
  const det = axes[0][0] * (axes[1][1] * axes[2][2] - axes[1][2] * axes[2][1])
            - axes[0][1] * (axes[1][0] * axes[2][2] - axes[1][2] * axes[2][0])
            + axes[0][2] * (axes[1][0] * axes[2][1] - axes[1][1] * axes[2][0]);
  if (det < 0) axes.forEach((row) => { row[2] = -row[2]; });
  const side = (p, q, r) => Math.max(floor, Math.sqrt(Math.max(0, (6 * (p + q - r)) / m)));
  return { sides: [side(j2, j3, j1), side(j1, j3, j2), side(j1, j2, j3)], rotation: axes, center: b.slice() };
}

function matrix3(rot) {
  const m = new THREE.Matrix4();
  const r = rot || [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  m.set(r[0][0], r[0][1], r[0][2], 0, r[1][0], r[1][1], r[1][2], 0, r[2][0], r[2][1], r[2][2], 0, 0, 0, 0, 1);
  return m;
}

function htParts(ht) {  // a 4x4 row-major matrix or {rotation, translation}
  if (!ht) return null;
  if (Array.isArray(ht)) return { rot: ht.slice(0, 3).map((r) => r.slice(0, 3)), pos: ht.slice(0, 3).map((r) => r[3]) };
  return { rot: ht.rotation, pos: ht.translation || [0, 0, 0] };
}

export class Playback {
  constructor(container, model, solution) {
    this.model = model;
    this.solution = solution;
    this.ref = resolver(model);
    this.times = solution.data.map((r) => r[0]);
    this.index = 0;
    const width = container.clientWidth, height = container.clientHeight;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio);
    this.renderer.setSize(width, height);
    container.appendChild(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0xf3f5f8);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x667788, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(2, 3, 4);
    this.scene.add(sun);
    this.camera = new THREE.PerspectiveCamera(40, width / height, 1e-4, 1e5);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener("change", () => this.render());
    this.frames = [];  // per node: {group, offset, count, ref} posed from the solution
    this.build();
    this.frameCamera();
    this.setIndex(0);
    new ResizeObserver(() => this.resize(container)).observe(container);
  }

  nodeRef(i) {
    const node = this.model.nodes[i];
    return node.referenceCoordinates || (node.nodeType === "RigidBodyEP" ? [0, 0, 0, 1, 0, 0, 0] : [0, 0, 0]);
  }

  // Position and rotation of node i in solution row r.
  nodePose(i, r, pos, quat) {
    const info = this.solution.nodes[i], ref = this.nodeRef(i);
    const row = this.solution.data[r];
    const q = (k) => (info.count > k ? row[info.offset + k] : 0);
    pos.set(ref[0] + q(0), ref[1] + q(1), ref[2] + q(2));
    if (info.nodeType === "RigidBodyEP") {
      quat.set(ref[4] + q(4), ref[5] + q(5), ref[6] + q(6), ref[3] + q(3)).normalize();
    } else quat.identity();
  }

  scale() {
    // the size of the scene: the spread of the node positions over the whole solution
    const box = new THREE.Box3(), p = new THREE.Vector3(), quat = new THREE.Quaternion();
    const step = Math.max(1, Math.floor(this.solution.data.length / 50));
    for (let r = 0; r < this.solution.data.length; r += step) {
      for (let i = 0; i < this.model.nodes.length; i++) { this.nodePose(i, r, p, quat); box.expandByPoint(p); }
    }
    if (box.isEmpty()) box.expandByPoint(new THREE.Vector3());
    const size = box.getSize(new THREE.Vector3()).length();
    return { box, size: size > 0 ? size : 1 };
  }

  build() {
    const { box, size } = this.scale();
    this.box = box;
    this.sizeHint = size;
    const objects = this.model.objects || [];
    this.bodyGroup = new Map();  // object index -> the THREE.Group that moves with it
    objects.forEach((obj, k) => {
      const group = new THREE.Group();
      group.name = obj.name || `object${k}`;
      const graphics = visual(obj, "VgraphicsData");
      if (obj.objectType === "Ground") {
        const pos = obj.referencePosition || [0, 0, 0];
        group.position.fromArray(pos);
        group.quaternion.setFromRotationMatrix(matrix3(obj.referenceRotation));
      } else if (obj.objectType === "RigidBody" || obj.objectType === "MassPoint") {
        const node = this.ref("nodes", obj.nodeNumber);
        this.frames.push({ group, node });
        if (!(graphics && graphics.length)) group.add(this.defaultBody(obj, size));
      } else return;
      for (const g of graphics || []) {
        const o = graphicsObject(g);
        if (o) group.add(o);
      }
      this.bodyGroup.set(k, group);
      this.scene.add(group);
    });
    this.connectors = [];
    objects.forEach((obj, k) => {
      if (JOINTS.has(obj.objectType)) this.addJoint(obj, size);
      else if (SPRINGS.has(obj.objectType)) this.addSpring(obj);
    });
    const grid = new THREE.GridHelper(size * 2, 20, 0xb8c0cc, 0xdde2e8);
    grid.rotation.x = Math.PI / 2;  // the xy-plane: Exudyn's models mostly move in it, gravity along -y
    grid.position.set(box.getCenter(new THREE.Vector3()).x, box.getCenter(new THREE.Vector3()).y, box.min.z);
    this.scene.add(grid);
  }

  defaultBody(obj, size) {
    const floor = size * 0.02;
    const color = new THREE.Color(0x7b93b8);
    if (obj.objectType === "MassPoint") {
      return new THREE.Mesh(new THREE.SphereGeometry(size * 0.03, 20, 14), new THREE.MeshPhongMaterial({ color }));
    }
    const { sides, rotation, center } = boxFromInertia(obj.mass ?? obj.physicsMass, obj.inertia ?? obj.physicsInertia,
                                                       obj.centerOfMass ?? obj.physicsCenterOfMass, floor);
    const mesh = new THREE.Mesh(new THREE.BoxGeometry(...sides), new THREE.MeshPhongMaterial({ color, transparent: true, opacity: 0.85 }));
    mesh.quaternion.setFromRotationMatrix(matrix3(rotation));
    mesh.position.fromArray(center);
    return mesh;
  }

  // The group of the body a marker sits on, and the marker's local frame on it.
  markerFrame(m) {
    const mk = this.model.markers[this.ref("markers", m)];
    const body = mk.bodyNumber !== undefined ? this.ref("objects", mk.bodyNumber) : null;
    const local = new THREE.Matrix4();
    const ht = htParts(mk.localHT);
    if (ht) local.copy(matrix3(ht.rot)).setPosition(...ht.pos);
    else if (mk.localPosition) local.setPosition(...mk.localPosition);
    return { group: body !== null ? this.bodyGroup.get(body) : null, local };
  }

  addJoint(obj, size) {
    const [m0, m1] = obj.markerNumbers;
    const { group, local } = this.markerFrame(m0);
    if (!group) return;
    const holder = new THREE.Group();
    holder.matrixAutoUpdate = false;
    holder.matrix.copy(local).multiply(matrix3(obj.rotationMarker0));
    const axes = new THREE.AxesHelper(size * 0.08);
    holder.add(axes);
    const s = size * 0.012;
    const material = new THREE.MeshPhongMaterial({ color: 0xd97706 });
    if (obj.objectType === "JointRevoluteZ") {  // the rotation axis z
      const cyl = new THREE.Mesh(new THREE.CylinderGeometry(s, s, size * 0.05, 16), material);
      cyl.rotation.x = Math.PI / 2;
      holder.add(cyl);
    } else if (obj.objectType === "JointPrismaticX") {  // the sliding axis x
      const rod = new THREE.Mesh(new THREE.CylinderGeometry(s * 0.5, s * 0.5, size * 0.12, 12), material);
      rod.rotation.z = Math.PI / 2;
      holder.add(rod);
    } else holder.add(new THREE.Mesh(new THREE.SphereGeometry(s * 1.2, 16, 12), material));
    holder.name = obj.name || "joint";
    group.add(holder);
  }

  addSpring(obj) {
    const ends = obj.markerNumbers.map((m) => this.markerFrame(m));
    if (ends.some((e) => !e.group)) return;
    const geo = new THREE.BufferGeometry().setAttribute("position", new THREE.Float32BufferAttribute(new Float32Array(6), 3));
    const line = new THREE.Line(geo, new THREE.LineBasicMaterial({ color: 0x16a34a }));
    line.frustumCulled = false;
    this.scene.add(line);
    this.connectors.push({ line, ends });
  }

  frameCamera() {
    const center = this.box.getCenter(new THREE.Vector3());
    this.controls.target.copy(center);
    this.camera.position.copy(center).add(new THREE.Vector3(0.25, 0.35, 1.6).multiplyScalar(this.sizeHint * 0.8));
    this.camera.near = this.sizeHint * 1e-3;
    this.camera.far = this.sizeHint * 1e3;
    this.camera.updateProjectionMatrix();
    this.controls.update();
  }

  setIndex(r) {
    this.index = Math.max(0, Math.min(this.times.length - 1, r));
    const quat = new THREE.Quaternion();
    for (const f of this.frames) {
      this.nodePose(f.node, this.index, f.group.position, quat);
      f.group.quaternion.copy(quat);
      f.group.updateMatrixWorld(true);
    }
    const p = new THREE.Vector3();
    for (const { line, ends } of this.connectors) {
      const attr = line.geometry.getAttribute("position");
      ends.forEach((e, k) => {
        p.setFromMatrixPosition(new THREE.Matrix4().multiplyMatrices(e.group.matrixWorld, e.local));
        attr.setXYZ(k, p.x, p.y, p.z);
      });
      attr.needsUpdate = true;
    }
    this.render();
  }

  // The last row at or before time t.
  indexAt(t) {
    let lo = 0, hi = this.times.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (this.times[mid] <= t) lo = mid; else hi = mid - 1; }
    return lo;
  }

  get time() { return this.times[this.index]; }

  render() { this.renderer.render(this.scene, this.camera); }

  resize(container) {
    const w = container.clientWidth, h = container.clientHeight;
    if (!w || !h) return;
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.renderer.setSize(w, h);
    this.render();
  }
}
