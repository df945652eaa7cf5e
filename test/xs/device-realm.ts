// Evaluated in the xsnap worker before anything else: makes the worker's realm what a Moddable build
// leaves on the device, which xsnap alone does not (../shared/notes/moddable.md).
//
// - The intrinsics are frozen, as the XS linker's fxFreezeBuiltIns does (xs/tools/xsl.c): every
//   built-in constructor, prototype and namespace object, and what they reach. Assigning a property
//   that an object inherits read-only from them then throws in strict code, the "override mistake"
//   (`MyError.prototype.name = …`, or `this.name = …` in an Error subclass). No override taming, unlike
//   SES lockdown, which makes exactly that assignment work again.
// - The device's modules are preloaded: the harness's bundler (`preloadPlugin`) ends each core and
//   adapter module with a call to `__xsPreload` listing its top-level bindings, and after the bundle
//   has run, `__xsEndPreload` leaves what they reach as preload leaves it (documentation/xs/
//   "XS linker warnings.md"): every function frozen, class constructors included, so static fields are
//   read-only; Map, Set, WeakMap, WeakSet and Date instances immutable (their mutators throw); typed
//   arrays immutable through their methods (an indexed write cannot be made to throw from JavaScript);
//   plain objects, arrays and `let` bindings stay writable, as aliasable ROM objects do.
type Bindings = () => Record<string, unknown>;

interface DeviceRealm {
  __xsPreload(module: string, bindings: Bindings): void;
  __xsEndPreload(): string[];
}

const modules: [string, Bindings][] = [];

function isObject(v: unknown): v is object {
  return (typeof v === 'object' && v !== null) || typeof v === 'function';
}

/** Pushes everything `o` holds: its prototype and its own properties' values and accessors. */
function pushReachable(o: object, stack: unknown[]): void {
  stack.push(Object.getPrototypeOf(o));
  for (const key of Reflect.ownKeys(o)) {
    const d = Reflect.getOwnPropertyDescriptor(o, key);
    if (d === undefined) continue;
    if ('value' in d) stack.push(d.value);
    else stack.push(d.get, d.set);
  }
}

/** The intrinsics no global property reaches: iterator, generator and async function prototypes. */
function hiddenIntrinsics(): unknown[] {
  const proto = Object.getPrototypeOf;
  const arrayIterator = proto([][Symbol.iterator]());
  return [
    arrayIterator,
    proto(arrayIterator),
    proto(new Map().entries()),
    proto(new Set().values()),
    proto(''[Symbol.iterator]()),
    proto(/./[Symbol.matchAll]('')),
    proto(function* () {}),
    proto(async function () {}),
    proto(async function* () {}),
    Reflect.getOwnPropertyDescriptor(Function.prototype, 'caller')?.get,
  ];
}

function freezeIntrinsics(): void {
  const stack: unknown[] = hiddenIntrinsics();
  // The global object itself stays open, as on the device: an app may still add globals.
  for (const key of Reflect.ownKeys(globalThis)) stack.push((globalThis as Record<PropertyKey, unknown>)[key]);
  const seen = new Set<object>();
  while (stack.length > 0) {
    const o = stack.pop();
    if (!isObject(o) || seen.has(o) || o === globalThis) continue;
    seen.add(o);
    Object.freeze(o);
    pushReachable(o, stack);
  }
}

const MUTATORS: [unknown, string[]][] = [
  [Map.prototype, ['set', 'delete', 'clear']],
  [Set.prototype, ['add', 'delete', 'clear']],
  [WeakMap.prototype, ['set', 'delete']],
  [WeakSet.prototype, ['add', 'delete']],
  [Object.getPrototypeOf(Uint8Array.prototype), ['copyWithin', 'fill', 'reverse', 'set', 'sort']],
  [
    Date.prototype,
    Object.getOwnPropertyNames(Date.prototype).filter((name) => name.startsWith('set')),
  ],
];

/** Makes a preloaded built-in instance as immutable as XS makes it: its mutators throw, as on the device. */
function makeReadOnly(o: object, methods: string[]): void {
  for (const name of methods) {
    Object.defineProperty(o, name, {
      value: () => {
        throw new TypeError(name + ': read-only (preloaded ' + Object.prototype.toString.call(o) + ')');
      },
    });
  }
  // Not freeze: a typed array with elements cannot be frozen. The methods defined above are read-only already.
  Object.preventExtensions(o);
}

/** Leaves everything the modules' bindings reach as preload does; returns the modules it saw. */
function endPreload(): string[] {
  const stack: unknown[] = [];
  for (const [, bindings] of modules) {
    const values = bindings();
    for (const key of Object.keys(values)) stack.push(values[key]);
  }
  const seen = new Set<object>();
  while (stack.length > 0) {
    const o = stack.pop();
    // Intrinsics are frozen already and stay out of the walk.
    if (!isObject(o) || seen.has(o) || Object.isFrozen(o)) continue;
    seen.add(o);
    pushReachable(o, stack);
    if (typeof o === 'function') {
      Object.freeze(o);
      continue;
    }
    for (const [proto, methods] of MUTATORS) {
      if (proto !== null && Object.prototype.isPrototypeOf.call(proto, o)) makeReadOnly(o, methods);
    }
  }
  return modules.map(([name]) => name);
}

const realm: DeviceRealm = {
  __xsPreload: (module, bindings) => {
    modules.push([module, bindings]);
  },
  __xsEndPreload: endPreload,
};
Object.assign(globalThis, realm);
freezeIntrinsics();
