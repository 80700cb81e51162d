//! A JavaScript object built field by field, for `skirmish.debug()`.
//!
//! The debug state is built as a plain JavaScript object and turned into
//! JSON by the browser's own `JSON.stringify`, so the client carries no
//! JSON writer (and no `serde_json::Value`) of its own. Numbers are
//! JavaScript numbers: counters stay exact up to 2^53, far beyond what a
//! session counts.

use js_sys::{Array, Object, Reflect, JSON};
use wasm_bindgen::JsValue;

/// An object being filled.
pub struct Fields(Object);

impl Default for Fields {
    fn default() -> Fields {
        Fields::new()
    }
}

impl Fields {
    /// An empty object.
    pub fn new() -> Fields {
        Fields(Object::new())
    }

    /// Sets `key` to `value`.
    #[must_use]
    pub fn with(self, key: &str, value: impl Into<Field>) -> Fields {
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), &value.into().0);
        self
    }

    /// The object as JSON text (`null` if the browser cannot write it).
    pub fn to_json(&self) -> String {
        JSON::stringify(&self.0)
            .ok()
            .and_then(|s| s.as_string())
            .unwrap_or_else(|| "null".to_string())
    }
}

/// One value of a field: a number, a string, a boolean, `null`, an array
/// or an object.
pub struct Field(JsValue);

impl From<f64> for Field {
    fn from(n: f64) -> Field {
        Field(JsValue::from_f64(n))
    }
}

impl From<f32> for Field {
    /// In its shortest decimal form, as `0.1`, not `0.10000000149011612`:
    /// the fewest significant digits (at most 9) that read back as the
    /// same `f32`, found with the browser's own number formatting (the
    /// page carries no float formatting of its own).
    fn from(n: f32) -> Field {
        let wide = f64::from(n);
        let number = js_sys::Number::from(wide);
        let short = (1..=9)
            .filter_map(|digits| number.to_precision(digits).ok())
            .filter_map(|text| text.as_string())
            .map(|text| js_sys::Number::parse_float(&text))
            .find(|v| *v as f32 == n)
            .unwrap_or(wide);
        Field(JsValue::from_f64(short))
    }
}

impl From<u64> for Field {
    fn from(n: u64) -> Field {
        Field(JsValue::from_f64(n as f64))
    }
}

impl From<u32> for Field {
    fn from(n: u32) -> Field {
        Field(JsValue::from_f64(f64::from(n)))
    }
}

impl From<u16> for Field {
    fn from(n: u16) -> Field {
        Field(JsValue::from_f64(f64::from(n)))
    }
}

impl From<usize> for Field {
    fn from(n: usize) -> Field {
        Field(JsValue::from_f64(n as f64))
    }
}

impl From<bool> for Field {
    fn from(b: bool) -> Field {
        Field(JsValue::from_bool(b))
    }
}

impl From<&str> for Field {
    fn from(s: &str) -> Field {
        Field(JsValue::from_str(s))
    }
}

impl From<String> for Field {
    fn from(s: String) -> Field {
        Field(JsValue::from_str(&s))
    }
}

impl From<Fields> for Field {
    fn from(object: Fields) -> Field {
        Field(object.0.into())
    }
}

impl<T: Into<Field>> From<Option<T>> for Field {
    fn from(value: Option<T>) -> Field {
        value.map_or(Field(JsValue::NULL), Into::into)
    }
}

impl<T: Into<Field>> From<Vec<T>> for Field {
    fn from(items: Vec<T>) -> Field {
        let array = Array::new();
        for item in items {
            array.push(&item.into().0);
        }
        Field(array.into())
    }
}
