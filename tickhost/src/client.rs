//! Connecting to tickhost (starting it when absent) and exchanging requests.
