#!/bin/sh
# Sample for the shellcheck tests: SC2086 on line 4 (after an emoji), SC2046 on line 5.
name=$1
echo "😀" $name
ls $(pwd)/*.txt
