exports.twice = (n) => n * 2;
