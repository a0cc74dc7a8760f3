// Widgets: a tiny component registry with events. Saved with CRLF line endings.
// Test data for lspmux's Locate engine.
'use strict';

const DEFAULTS = Object.freeze({ width: 120, height: 40, visible: true, label: '🙂 widget' });

class EventEmitter {
  constructor() {
    this.listeners = new Map();
  }

  on(event, listener) {
    if (!this.listeners.has(event)) {
      this.listeners.set(event, []);
    }
    this.listeners.get(event).push(listener);
    return () => this.off(event, listener);
  }

  off(event, listener) {
    const list = this.listeners.get(event) || [];
    this.listeners.set(event, list.filter((l) => l !== listener));
  }

  emit(event, ...args) {
    for (const listener of this.listeners.get(event) || []) {
      listener.apply(this, args);
    }
    return this;
  }
}

class Widget extends EventEmitter {
  constructor(id, options = {}) {
    super();
    this.id = id;
    this.options = { ...DEFAULTS, ...options };
    this.children = [];
    this.parent = null;
  }

  get size() {
    return { width: this.options.width, height: this.options.height };
  }

  set label(value) {
    this.options.label = String(value).trim();
    this.emit('change', 'label', this.options.label);
  }

  append(child) {
    if (child === this) {
      throw new Error(`widget ${this.id} cannot contain itself`);
    }
    child.parent = this;
    this.children.push(child);
    this.emit('append', child);
    return child;
  }

  render(depth = 0) {
    const pad = '  '.repeat(depth);
    const own = `${pad}<${this.constructor.name} id="${this.id}">`;
    const inner = this.children.map((c) => c.render(depth + 1));
    return [own, ...inner].join('\n');
  }
}

class Button extends Widget {
  constructor(id, onClick) {
    super(id, { height: 24 });
    this.on('click', onClick);
  }

  render(depth = 0) {
    return `${'  '.repeat(depth)}[ ${this.options.label} ]`;
  }

  click() {
    if (this.options.visible) {
      this.emit('click', { target: this, at: Date.now() });
    }
  }
}

class Registry {
  #widgets = new Map();

  register(widget) {
    if (this.#widgets.has(widget.id)) {
      throw new Error(`duplicate widget id: ${widget.id}`);
    }
    this.#widgets.set(widget.id, widget);
    return widget;
  }

  lookup(id) {
    const widget = this.#widgets.get(id);
    return widget === undefined ? null : widget;
  }

  *walk(root) {
    yield root;
    for (const child of root.children) {
      yield* this.walk(child);
    }
  }

  count(predicate = () => true) {
    let n = 0;
    for (const widget of this.#widgets.values()) {
      if (predicate(widget)) n += 1;
    }
    return n;
  }
}

function debounce(fn, wait = 50) {
  let timer = null;
  return function debounced(...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), wait);
  };
}

const registry = new Registry();
const root = registry.register(new Widget('root', { width: 800 }));
const ok = root.append(registry.register(new Button('ok', () => console.log('ok clicked'))));
ok.label = 'OK';

module.exports = { EventEmitter, Widget, Button, Registry, debounce, registry, root };
