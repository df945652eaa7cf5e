// Evaluated in the xsnap worker before anything else: makes the worker's realm what a Moddable build
// leaves on the device, which xsnap alone does not (docs/xs.md).
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
//   plain objects, arrays and `let` bindings stay writable, as aliasable ROM objects do. A RegExp refuses
//   to match: XS 8.2.3 crashes when a garbage collection runs during the exec of a preloaded one (seen
//   on lin builds, docs/moddable.md), so the core writes its literals inside functions. Like the XS
//   linker's fxCheckAliases (xs/tools/xslSlot.c), it lists the objects left aliasable: each costs a RAM
//   pointer on the device, and the linker warns "not frozen". (Its "no const" warnings are about
//   closure variables, which JavaScript cannot see.)
type Bindings = () => Record<string, unknown>;

/** What preload left: the modules, and the paths of the objects it left aliasable (`module: name.key[0]`). */
export interface PreloadReport {
  modules: string[];
  aliasable: string[];
}

interface DeviceRealm {
  __xsPreload(module: string, bindings: Bindings): void;
  __xsEndPreload(): PreloadReport;
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

const MUTATORS: [object, string[]][] = [
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

/** Makes a preloaded RegExp throw where the device would crash: every match goes through `exec`. */
function refuseMatching(o: RegExp, path: string): void {
  Object.defineProperty(o, 'exec', {
    value: () => {
      throw new TypeError(path + ': a preloaded RegExp crashes XS 8.2.3 when a garbage collection runs during its exec; write the literal inside the function that uses it');
    },
  });
}

/**
 * A class's prototype met before its class: a base class's, reached from a subclass's prototype before
 * the walk came to the base class itself.
 */
function isClassPrototype(o: object): boolean {
  const d = Reflect.getOwnPropertyDescriptor(o, 'constructor');
  return d !== undefined && typeof d.value === 'function' && (d.value as { prototype?: unknown }).prototype === o;
}

/** Leaves everything the modules' bindings reach as preload does, and reports what stayed aliasable. */
function endPreload(): PreloadReport {
  const stack: [unknown, string][] = [];
  for (const [name, bindings] of modules) {
    const values = bindings();
    for (const key of Object.keys(values)) stack.push([values[key], name + ': ' + key]);
  }
  const seen = new Set<object>();
  const prototypes = new Set<unknown>();
  const aliasable: string[] = [];
  while (stack.length > 0) {
    const [o, path] = stack.pop() as [unknown, string];
    // Intrinsics are frozen already and stay out of the walk.
    if (!isObject(o) || seen.has(o) || Object.isFrozen(o)) continue;
    seen.add(o);
    const reachable: unknown[] = [];
    pushReachable(o, reachable);
    const keys = [Object.getPrototypeOf(o) === null ? '' : '__proto__'];
    for (const key of Reflect.ownKeys(o)) {
      const d = Reflect.getOwnPropertyDescriptor(o, key) as PropertyDescriptor;
      const name = Array.isArray(o) && typeof key === 'string' && /^\d+$/.test(key) ? '[' + key + ']' : '.' + String(key);
      if ('value' in d) keys.push(name);
      else keys.push(name + ' (get)', name + ' (set)');
    }
    reachable.forEach((value, i) => stack.push([value, path + (i === 0 ? '' : keys[i])]));
    if (typeof o === 'function') {
      // A class's prototype holds its methods; the linker does not count it among aliasable objects.
      prototypes.add((o as { prototype?: unknown }).prototype);
      Object.freeze(o);
      continue;
    }
    const builtin = MUTATORS.find(([proto]) => Object.prototype.isPrototypeOf.call(proto, o));
    if (builtin !== undefined) makeReadOnly(o, builtin[1]);
    else if (o instanceof RegExp) refuseMatching(o, path);
    else if (!prototypes.has(o) && !isClassPrototype(o)) aliasable.push(path);
  }
  return { modules: modules.map(([name]) => name), aliasable: aliasable.sort() };
}

const realm: DeviceRealm = {
  __xsPreload: (module, bindings) => {
    modules.push([module, bindings]);
  },
  __xsEndPreload: endPreload,
};
Object.assign(globalThis, realm);
freezeIntrinsics();
