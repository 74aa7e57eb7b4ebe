// The checks at the boundary of the page's formulas (lecture.js, plans.js): a bad argument
// throws a RangeError or TypeError that names it and shows the value, as the package's
// decompkit.validate raises a ValueError.

/** A value for a message, as Python's repr shows it (strings in single quotes) [validate.short]. */
export function shown(value) {
  if (typeof value === "string") return value.includes("'") ? JSON.stringify(value) : `'${value}'`;
  if (typeof value === "number" || typeof value === "boolean" || value == null) {
    return String(value);
  }
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return String(value);
  }
}

export function number(name, value) {
  if (typeof value !== "number") {
    throw new TypeError(`${name} must be a number, got ${shown(value)}`);
  }
  return value;
}

/** A probability in [0, 1]; NaN is refused [validate.probability]. */
export function probability(name, value) {
  if (!(number(name, value) >= 0 && value <= 1)) {
    throw new RangeError(`${name} must be in [0, 1], got ${value}`);
  }
  return value;
}

/** A finite whole number >= minimum, of any size a double holds [validate.large_count]. */
export function largeCount(name, value, minimum = 0) {
  if (!(Number.isFinite(number(name, value)) && Math.floor(value) === value && value >= minimum)) {
    throw new RangeError(`${name} must be an integer >= ${minimum}, got ${value}`);
  }
  return value;
}

/** A whole number in [minimum, 2**63 - 1] [validate.count]. */
export function count(name, value, minimum = 0) {
  largeCount(name, value, minimum);
  if (value >= 2 ** 63) {
    throw new RangeError(`${name} must be an integer <= 2**63 - 1, got ${value}`);
  }
  return value;
}

