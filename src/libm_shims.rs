//! The functions of the C maths library the executable calls (`pow`,
//! `powf`, `logf`, `sincosf` in a release build, `sinf`, `cosf` and `log2`
//! too in a debug one: LLVM lowers Rust's `f64::powf`, `f32::ln`,
//! `f64::log2` and `sin` and `cos` to them), defined here by the `libm` crate
//! (the Rust port of musl's, already a dependency through `num-traits`).
//! With every call resolved in the executable, the linker's `--as-needed`
//! leaves `libm.so.6` out: no process of Tickloop (every launcher is one)
//! maps it, writes its two pages of data or pays its loading at start
//! (`benches/results/cost-2026-12-07e.md`). musl's routines and glibc's
//! are both correctly rounded or within one unit in the last place.
//!
//! A call to a maths function not defined here links `libm.so.6` again
//! (nothing breaks; `tests/executable_libraries.rs` says which library
//! came back). `nm -D --undefined-only target/release/tickloop` lists what
//! the executable takes from shared libraries.

/// `pow(3)`.
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `powf(3)`.
#[no_mangle]
pub extern "C" fn powf(x: f32, y: f32) -> f32 {
    libm::powf(x, y)
}

/// `logf(3)`.
#[no_mangle]
pub extern "C" fn logf(x: f32) -> f32 {
    libm::logf(x)
}

/// `log2(3)`.
#[no_mangle]
pub extern "C" fn log2(x: f64) -> f64 {
    libm::log2(x)
}

/// `sinf(3)`.
#[no_mangle]
pub extern "C" fn sinf(x: f32) -> f32 {
    libm::sinf(x)
}

/// `cosf(3)`.
#[no_mangle]
pub extern "C" fn cosf(x: f32) -> f32 {
    libm::cosf(x)
}

/// `sincosf(3)`: the sine and the cosine of `x`, through the pointers.
///
/// # Safety
///
/// `sin` and `cos` are valid for a write of one `f32` each, as C's
/// `sincosf` requires of its callers (LLVM's, here).
#[no_mangle]
pub unsafe extern "C" fn sincosf(x: f32, sin: *mut f32, cos: *mut f32) {
    let (s, c) = libm::sincosf(x);
    // SAFETY: the caller's contract above.
    unsafe {
        sin.write(s);
        cos.write(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_gives_its_own_results_in_its_own_argument_order() {
        assert_eq!(pow(2.0, 10.0), 1024.0);
        assert_eq!(pow(10.0, -2.0), 0.01);
        assert_eq!(pow(9.0, 0.5), 3.0);
        assert_eq!(powf(2.0, 3.0), 8.0);
        assert_eq!(powf(3.0, 2.0), 9.0);
        assert_eq!(logf(1.0), 0.0);
        assert!((logf(std::f32::consts::E) - 1.0).abs() <= f32::EPSILON);
        assert_eq!(log2(1024.0), 10.0);
        assert!((sinf(std::f32::consts::FRAC_PI_2) - 1.0).abs() <= f32::EPSILON);
        assert!(cosf(std::f32::consts::FRAC_PI_2).abs() <= f32::EPSILON);
        let (mut s, mut c) = (0.0f32, 0.0f32);
        // SAFETY: both pointers are to live locals.
        unsafe { sincosf(std::f32::consts::FRAC_PI_6, &mut s, &mut c) };
        assert!((s - 0.5).abs() <= f32::EPSILON, "{s}");
        assert!((c - 0.75f32.sqrt()).abs() <= f32::EPSILON, "{c}");
    }
}
