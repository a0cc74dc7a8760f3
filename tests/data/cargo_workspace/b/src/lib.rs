pub fn add_two(value: i32) -> i32 {
    a::add_one(a::add_one(value))
}
